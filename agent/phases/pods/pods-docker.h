/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pods phase for Docker as kubelet's runtime (dockershim, or cri-dockerd that no longer answers):
 * kubelet's containers removed through Docker's Engine API, Docker and everything else it runs kept. */
#pragma once

#include <stdbool.h>

#include "agent/engine/context.h"
#include "agent/engine/plan.h"

/* For each docker-endpoint line of the manifest: one "docker" row saying what the engine answers,
 * then one row per container kubelet made (containers first, sandboxes last), each removed with its
 * anonymous volumes. cri_dockerd_answered: a cri-dockerd CRI socket answered in this plan, and its
 * pods go through it; then the engine is not asked. */
int pods_docker_plan(Context *ctx, Plan *plan, bool cri_dockerd_answered);
