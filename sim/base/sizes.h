/* Named byte sizes: binary (KiB = 2^10) and decimal (kB = 10^3), as scenario files write them
 * (config/units.h parses both). Use these instead of writing 1073741824.0 out. */
#ifndef HS_SIZES_H
#define HS_SIZES_H

#define HS_KiB 1024.0
#define HS_MiB 1048576.0
#define HS_GiB 1073741824.0
#define HS_TiB 1099511627776.0

#define HS_kB 1e3
#define HS_MB 1e6
#define HS_GB 1e9
#define HS_TB 1e12

#endif
