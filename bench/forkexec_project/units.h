/* SPDX-License-Identifier: MIT */
/* The units of bench/forkexec's small project: one function a file. */
#ifndef UNITS_H
#define UNITS_H
int unit01(int x);
int unit02(int x);
int unit03(int x);
int unit04(int x);
int unit05(int x);
int unit06(int x);
int unit07(int x);
int unit08(int x);
int unit09(int x);
int unit10(int x);
int unit11(int x);
int unit12(int x);
int unit13(int x);
int unit14(int x);
int unit15(int x);
int unit16(int x);
int unit17(int x);
int unit18(int x);
int unit19(int x);
#endif
