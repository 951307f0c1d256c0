/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/* Fault injection for tests: `roamd --test-faults=FILE` makes the next N kernel operations of
 * a kind fail, so every failure path of the reconciler runs in CI. FILE holds words
 * `KIND:N` (nft-commit, route-add, rule-add; nft-commit-lost and nft-commit-unsent: a commit
 * that times out, applied or not; nft-dump: a callback of a counter dump; stats-apply: the
 * accounting of a counter dump, at its last step that can fail; nft-answer-hold: the outcome
 * of an asynchronous commit is told only once FILE is written again); it is read again before each
 * operation, and a changed content resets the counts, so a test arms a fault at the moment it wants
 * one. Compiled in with meson -Dfault_injection=true (the default; distributions turn it off),
 * honoured only with the flag. */

typedef enum FaultPoint {
        FAULT_NFT_COMMIT,
        FAULT_ROUTE_ADD,
        FAULT_RULE_ADD,
        FAULT_NFT_COMMIT_LOST,   /* applied by the kernel, its answer "never came" */
        FAULT_NFT_COMMIT_UNSENT, /* never sent, and no answer came */
        FAULT_NFT_DUMP,          /* a callback fails in the middle of a counter dump */
        FAULT_STATS_APPLY,       /* accounting a dump fails late (as out of memory would) */
        FAULT_NFT_ANSWER_HOLD,   /* an asynchronous commit's outcome is told only once the
                                  * fault file is written again */
        _FAULT_POINT_MAX,
        _FAULT_POINT_INVALID = -22,
} FaultPoint;

const char *fault_point_to_string(FaultPoint p);
FaultPoint fault_point_from_string(const char *s);

/* -EOPNOTSUPP when built without fault injection. */
int fault_setup(const char *file);
/* Whether this roamd was built with fault injection (-Dfault_injection=true, tests only). */
bool fault_injection_built(void);
/* The fault file (NULL: no fault injection). */
const char *fault_file_path(void);
/* 0, or -EIO when this operation is to fail. */
int fault_check(FaultPoint p);
