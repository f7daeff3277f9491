/*
 * daemon.h — `enormoustext daemon` (daemon.c).
 */
#ifndef ET_TOOL_DAEMON_H
#define ET_TOOL_DAEMON_H

int et_cmd_daemon(int argc, char **argv);
const struct et_cmd_spec *et_cmd_daemon_spec(void);

#endif
