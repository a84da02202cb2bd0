/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fixture of the kmmscand tests named promote.*: before each test,
 * kmm_env_setup() saves what a test may change and sets the knobs for
 * quick detection; after it, the parent puts everything back, after a
 * test that died too (kmmscand_harness.h).  Included by a test file that
 * defines TEST_F(promote, ...) tests.
 */
#ifndef __KMMSCAND_FIXTURE_H
#define __KMMSCAND_FIXTURE_H

#include "kmmscand_harness.h"

FIXTURE(promote) {
	struct kmm_env env;
};

FIXTURE_SETUP(promote)
{
	kmm_env_setup(_metadata, &self->env);
}

FIXTURE_TEARDOWN_PARENT(promote)
{
	kmm_env_restore(&self->env);
}

#endif /* __KMMSCAND_FIXTURE_H */
