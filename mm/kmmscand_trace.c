// SPDX-License-Identifier: GPL-2.0
/*
 * kmmscand_trace: the kmmscand tracepoints, defined once here for all the
 * files of kmmscand, which only include <trace/events/kmmscand.h>.
 */

#define CREATE_TRACE_POINTS
#include <trace/events/kmmscand.h>
