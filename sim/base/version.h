#ifndef HS_VERSION_H
#define HS_VERSION_H
#define HS_VERSION "0.1.0"
#endif
