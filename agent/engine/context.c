/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the modules keep for one run, hung off the Context by a key of their own. */

#include <stdlib.h>

#include "agent/engine/context.h"

static size_t state_index(const Context *ctx, const ContextStateType *type) {
        size_t i = 0;

        while (i < CONTEXT_STATES_MAX && ctx->facts.states[i].type && ctx->facts.states[i].type != type)
                i++;
        return i;
}

void *context_state(Context *ctx, const ContextStateType *type) {
        size_t i = state_index(ctx, type);

        if (i == CONTEXT_STATES_MAX)
                return NULL;
        if (!ctx->facts.states[i].type) {
                ctx->facts.states[i].state = calloc(1, type->size);
                if (!ctx->facts.states[i].state)
                        return NULL;
                ctx->facts.states[i].type = type;
        }
        return ctx->facts.states[i].state;
}

const void *context_state_peek(const Context *ctx, const ContextStateType *type) {
        size_t i = state_index(ctx, type);

        return i < CONTEXT_STATES_MAX && ctx->facts.states[i].type ? ctx->facts.states[i].state : NULL;
}

void context_states_done(Context *ctx) {
        for (size_t i = 0; i < CONTEXT_STATES_MAX && ctx->facts.states[i].type; i++) {
                if (ctx->facts.states[i].type->done)
                        ctx->facts.states[i].type->done(ctx->facts.states[i].state);
                free(ctx->facts.states[i].state);
                ctx->facts.states[i].type = NULL;
                ctx->facts.states[i].state = NULL;
        }
}
