/* Until topology/device.c lands: a weak stand-in for hs_device_from_yaml so the cluster and collective tests
 * link. A scalar names a type (any name); a mapping takes `name` and `scaleup_bandwidth`. The library's
 * definition, once present, is not pulled in for this symbol, so tests using this header keep the stub;
 * remove the include when device.c is merged. */
#ifndef HS_TEST_DEVICE_STUB_H
#define HS_TEST_DEVICE_STUB_H
#include <stdio.h>
#include <string.h>

#include "config/cfg.h"
#include "topology/device.h"

__attribute__((weak)) int hs_device_from_yaml(const hs_ynode *n, const char *path, hs_device_type *out, hs_err *err)
{
	memset(out, 0, sizeof *out);
	if (n->kind == HS_Y_SCALAR) {
		snprintf(out->name, sizeof out->name, "%s", n->str);
		if (strcmp(n->str, "NOPE") == 0)
			return hs_cfg_err(n, err, path, "", "unknown device type 'NOPE'");
		out->scaleup_bw = strstr(n->str, "H100") || strstr(n->str, "H200") ? 450e9 : 300e9;
		return 0;
	}
	const char *name;
	if (hs_cfg_str(n, path, "name", "custom", 0, &name, err) ||
	    hs_cfg_num(n, path, "scaleup_bandwidth", HS_U_BW, 0, 1e18, 0, 0, &out->scaleup_bw, err))
		return -1;
	snprintf(out->name, sizeof out->name, "%s", name);
	return 0;
}
#endif
