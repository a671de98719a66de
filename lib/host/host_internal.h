/* The host backend's op implementations, one file per op family. */
#ifndef BK_HOST_INTERNAL_H
#define BK_HOST_INTERNAL_H

#include "../bk_internal.h"

/* Set plan->launch, kernel name and precision for a gated activation. */
BK_HIDDEN BkResult bk_host_gated_select(BkPlan plan);

#endif
