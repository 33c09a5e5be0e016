/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Node paths: validation of manifest paths and component-wise glob matching. No file system access. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* A manifest target path must be absolute, normalised (no "." or ".." components, no empty
 * components), must not be "/", and must not have a glob in its first component. Returns 0 or
 * -EINVAL with a reason in *reterr. The system paths are path_guard_check()'s. */
int path_validate_target(const char *path, char **reterr);

/* May a remove, empty or unmount line with this (valid target) pattern stand? 0 when it reaches no
 * system path; -EPERM when it is a literal path naming one (the only case "allow-system-path" may
 * opt in); -EINVAL when it is a glob that could match one, or that stands right beneath a system
 * directory without a literal start ("/etc/ *"). *reterr gets the reason, a verb phrase. */
int path_guard_check(const char *pattern, char **reterr);

/* Is this literal path a system path (one path_guard_check() answers -EPERM for)? */
bool path_is_guarded(const char *path);

/* The guarded paths themselves ("*" components stand for any name), for tests and documentation. */
const char *const *path_guarded_list(size_t *ret_n);

/* The weaker rule for "protect": absolute and normalised, any depth. */
int path_validate_absolute(const char *path, char **reterr);

/* Strip duplicate and trailing slashes in place ("/a//b/" -> "/a/b"). */
char *path_simplify(char *path);

/* Does the component contain fnmatch(3) glob characters (*, ?, [)? */
bool path_component_is_glob(const char *c);
bool path_is_glob(const char *path);

/* The matching rule of every path-taking directive: fnmatch(3) on one name with FNM_NOESCAPE, so a
 * backslash is an ordinary character ("foo\x2dbar" is that name); "[*]", "[?]", "[[]" are the literal
 * glob characters. */
bool path_name_match(const char *glob, const char *name);

/* Component-wise path_name_match(): "/var/lib/kubelet/ *" matches "/var/lib/kubelet/pods" but not
 * "/var/lib/kubelet/pods/x". '*' matches leading dots too; it never matches '/'. */
bool path_pattern_match(const char *pattern, const char *path);

/* Does pattern match path or one of its ancestors ("path lies at or beneath a match")? */
bool path_pattern_covers(const char *pattern, const char *path);

/* Could something at or beneath path match the pattern: path is a proper ancestor of a match? */
bool path_pattern_below(const char *pattern, const char *path);

/* Number of components: "/" is 0, "/a/b" is 2. */
unsigned path_depth(const char *path);

/* Join "prefix" and node path "path" ("/tmp/r" + "/etc" = "/tmp/r/etc"; "/" + "/etc" = "/etc"). */
char *path_join_root(const char *root, const char *path);
