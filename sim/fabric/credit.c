/* The table of admission schemes and the shared defaults. One scheme per file: credit_<name>.c. */
#include "sim/fabric/credit.h"

#include <string.h>

const char *const hs_fabric_op_names[] = {"read", "write", "atomic", "notify", NULL};

extern const hs_credit_scheme hs_credit_none, hs_credit_byte, hs_credit_per_resource, hs_credit_vector;

const hs_credit_scheme *const hs_credit_schemes[] = {
	&hs_credit_none, &hs_credit_byte, &hs_credit_per_resource, &hs_credit_vector, NULL,
};

const hs_credit_scheme *hs_credit_find(const char *name)
{
	for (int i = 0; hs_credit_schemes[i]; i++)
		if (strcmp(hs_credit_schemes[i]->name, name) == 0)
			return hs_credit_schemes[i];
	return NULL;
}

void hs_credit_defaults(hs_credit_cfg *c, int64_t rxbuf, int64_t atomic_depth)
{
	if (!c->cell)
		c->cell = 64;
	if (!c->bytes)
		c->bytes = rxbuf;
	if (!c->hbm)
		c->hbm = rxbuf;
	if (!c->atomic_bytes)
		c->atomic_bytes = rxbuf;
	if (!c->resp)
		c->resp = rxbuf;
	if (!c->atomic)
		c->atomic = atomic_depth < 1 ? 1 : atomic_depth;
}
