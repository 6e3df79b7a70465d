/* The manual page hetsim(1), in man(7) roff, generated from the command table and each command's option
 * table (sim/cli/cmd_table.c, opt.h), so the page lists exactly what the parser accepts. `hetsim help --man`
 * prints it; `make install` installs it. */
#ifndef HS_MAN_H
#define HS_MAN_H

#include <stdio.h>

void hs_man_write(FILE *f);

#endif
