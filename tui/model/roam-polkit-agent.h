/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/* polkit's text agent for this process's calls, the way systemctl starts it (systemd's
 * polkit_agent_open(), src/shared/spawn-polkit-agent.c): `pkttyagent --process PID
 * --notify-fd N --fallback`, only when we are not root and stdin is a terminal; it has
 * registered with polkit once it closes N (waited for at most 10 s). It asks for a password
 * on the terminal only when roamd's polkit check for one of our calls needs one. */
#define ROAM_POLKIT_AGENT_PATH "/usr/bin/pkttyagent"

/* 1 when an agent runs for us (started now or before), 0 when none is wanted or available,
 * <0 on failure (logged). */
int roam_polkit_agent_open(void);
/* Stops the agent (SIGTERM) and reaps it; before an exec and at exit. */
void roam_polkit_agent_close(void);
bool roam_polkit_agent_running(void);
