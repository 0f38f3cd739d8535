/* SPDX-License-Identifier: MIT */
/*
 * `ptshare top --listen ADDR`: a minimal HTTP/1.1 responder for Prometheus
 * (docs/fleet.md): GET /metrics answers the report's OpenMetrics text
 * (report_openmetrics, the writer of --openmetrics FILE), one request per
 * connection, Connection: close.  Served between two refreshes, one
 * connection at a time, each bounded in time: a slow client delays the
 * view by at most HTTP_TIMEOUT_S.
 */
#define _GNU_SOURCE /* accept4 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "top.h"

#define HTTP_TIMEOUT_S 2
#define HTTP_REQUEST_MAX 8192

/* ADDR as HOST:PORT ([V6]:PORT) or PORT alone, on loopback. */
static int split(const char *addr, char *host, size_t hcap, const char **port)
{
	const char *colon = strrchr(addr, ':');
	if (!colon) {
		snprintf(host, hcap, "127.0.0.1");
		*port = addr;
		return 0;
	}
	size_t n = (size_t)(colon - addr);
	if (n >= 2 && addr[0] == '[' && addr[n - 1] == ']') {
		addr++;
		n -= 2;
	}
	if (!n || n >= hcap || !colon[1])
		return -1;
	memcpy(host, addr, n);
	host[n] = '\0';
	*port = colon + 1;
	return 0;
}

int top_http_listen(struct top_http *h, const char *addr, char *why, size_t cap)
{
	char host[256];
	const char *port;
	*h = (struct top_http){ .fd = -1 };
	if (split(addr, host, sizeof(host), &port) ||
	    strspn(port, "0123456789") != strlen(port)) {
		snprintf(why, cap, "not HOST:PORT nor PORT");
		return -1;
	}
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *res;
	int err = getaddrinfo(host, port, &hints, &res);
	if (err) {
		snprintf(why, cap, "%s", gai_strerror(err));
		return -1;
	}
	err = 0;
	h->fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int on = 1;
	if (h->fd < 0 ||
	    setsockopt(h->fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) ||
	    bind(h->fd, res->ai_addr, res->ai_addrlen) || listen(h->fd, 16))
		err = errno;
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);
	char name[NI_MAXHOST], serv[NI_MAXSERV];
	if (!err && !getsockname(h->fd, (struct sockaddr *)&sa, &len) &&
	    !getnameinfo((struct sockaddr *)&sa, len, name, sizeof(name), serv,
			 sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV))
		snprintf(h->url, sizeof(h->url), "http://%s%s%s:%s/metrics",
			 sa.ss_family == AF_INET6 ? "[" : "", name,
			 sa.ss_family == AF_INET6 ? "]" : "", serv);
	freeaddrinfo(res);
	if (err) {
		snprintf(why, cap, "%s", strerror(err));
		top_http_close(h);
		return -1;
	}
	return 0;
}

void top_http_close(struct top_http *h)
{
	if (h->fd >= 0)
		close(h->fd);
	h->fd = -1;
}

/* The request's head, up to its blank line: its length, or -1. */
static ssize_t read_head(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	while (n + 1 < cap) {
		ssize_t r = recv(fd, buf + n, cap - 1 - n, 0);
		if (r <= 0)
			return -1;
		n += (size_t)r;
		buf[n] = '\0';
		if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))
			return (ssize_t)n;
	}
	return -1;
}

static void send_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
		if (w <= 0)
			return;
		p += w;
		len -= (size_t)w;
	}
}

static void respond(int fd, const char *status, const char *type,
		    const char *body, size_t len, bool head_only)
{
	char head[512];
	int n = snprintf(head, sizeof(head), "HTTP/1.1 %s\r\nContent-Type: %s\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n%s\r\n",
			 status, type, len,
			 !strncmp(status, "405", 3) ? "Allow: GET, HEAD\r\n" : "");
	send_all(fd, head, (size_t)n);
	if (!head_only)
		send_all(fd, body, len);
}

/* The OpenMetrics text when the client takes it (Prometheus asks), else
 * the Prometheus text format's type: the same text, which both read. */
static const char *content_type(const char *head)
{
	const char *accept = strcasestr(head, "\naccept:");
	const char *eol = accept ? strchr(accept + 1, '\n') : NULL;
	const char *om = accept ? strstr(accept, "application/openmetrics-text")
			    : NULL;
	if (om && (!eol || om < eol))
		return "application/openmetrics-text; version=1.0.0; charset=utf-8";
	return "text/plain; version=0.0.4; charset=utf-8";
}

/* One request of one connection answered: GET /metrics, or an error. */
static void serve(int fd, const struct report *r)
{
	char head[HTTP_REQUEST_MAX], method[16], target[1024];
	static const char plain[] = "text/plain; charset=utf-8";
	if (read_head(fd, head, sizeof(head)) < 0 ||
	    sscanf(head, "%15s %1023s HTTP/1.%*c", method, target) != 2) {
		respond(fd, "400 Bad Request", plain, "bad request\n", 12, false);
		return;
	}
	bool head_only = !strcmp(method, "HEAD");
	target[strcspn(target, "?")] = '\0';
	if (strcmp(method, "GET") && !head_only) {
		respond(fd, "405 Method Not Allowed", plain, "GET /metrics\n", 13,
			false);
		return;
	}
	if (strcmp(target, "/metrics")) {
		respond(fd, "404 Not Found", plain, "GET /metrics\n", 13, head_only);
		return;
	}
	char *body = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&body, &len);
	if (m) {
		report_openmetrics(m, r);
		if (fclose(m)) {
			free(body);
			body = NULL;
		}
	}
	if (body)
		respond(fd, "200 OK", content_type(head), body, len, head_only);
	else
		respond(fd, "503 Service Unavailable", plain, "out of memory\n",
			14, head_only);
	free(body);
}

void top_http_serve(struct top_http *h, const struct report *r)
{
	int fd;
	while ((fd = accept4(h->fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		struct timeval tv = { .tv_sec = HTTP_TIMEOUT_S };
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		serve(fd, r);
		close(fd);
	}
}
