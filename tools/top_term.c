/* SPDX-License-Identifier: MIT */
/* The terminal `ptshare top` draws in: plain ANSI (VT100) sequences, which
 * every terminal and tmux take, stdin read a key at a time. */
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "top.h"

static struct termios saved;

int top_term_open(struct top_term *t)
{
	*t = (struct top_term){ .rows = 24, .cols = 80 };
	top_term_size(t);
	/* The alternate screen, the cursor hidden: the shell's screen is
	 * back as it was once top ends. */
	fputs("\033[?1049h\033[?25l", stdout);
	fflush(stdout);
	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved))
		return -1;
	struct termios raw = saved;
	raw.c_lflag &= (tcflag_t)~(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw))
		return -1;
	t->raw = true;
	return 0;
}

void top_term_size(struct top_term *t)
{
	struct winsize ws;
	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row && ws.ws_col) {
		t->rows = ws.ws_row;
		t->cols = ws.ws_col;
	}
}

void top_term_draw(const struct top_term *t, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	fputs("\033[H", stdout);
	for (int row = 0; row < t->rows && p < end; row++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);
		/* The last row without its newline: the screen would scroll. */
		fwrite(p, 1, n < (size_t)t->cols ? n : (size_t)t->cols, stdout);
		fputs(row + 1 < t->rows ? "\033[K\n" : "\033[K", stdout);
		p = nl ? nl + 1 : end;
	}
	fputs("\033[J", stdout);
	fflush(stdout);
}

void top_term_close(struct top_term *t)
{
	fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	if (t->raw)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
	t->raw = false;
}

int top_term_key(void)
{
	unsigned char c;
	return read(STDIN_FILENO, &c, 1) == 1 ? c : -1;
}
