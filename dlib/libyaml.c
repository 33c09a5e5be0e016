/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libyaml, loaded on first use: the orphan check parses kubeconfigs. Not linked in from libyaml.a:
 * Debian wants security fixes of a library to reach every program that uses it (lintian's
 * embedded-library), and only orphan-check needs it, which needs libcurl at run time anyway. The
 * emitter writes kubeadm's ClusterStatus back (forget), and a user's kubeconfig without this
 * cluster's entries (the files phase). */

#include <yaml.h>

#include "dlib/forward.h"

#define DLIB_THIS DLIB_LIBYAML

/* Missing library: 0 (libyaml's failure) or NULL; the deletes do nothing. */
/* clang-format off */
#define SYMBOLS(X, V, R) \
        V(void, yaml_document_delete, (yaml_document_t *document), (document), ) \
        X(int, yaml_emitter_close, (yaml_emitter_t *emitter), (emitter), 0) \
        V(void, yaml_emitter_delete, (yaml_emitter_t *emitter), (emitter), ) \
        X(int, yaml_emitter_dump, (yaml_emitter_t *emitter, yaml_document_t *document), (emitter, document), 0) \
        X(int, yaml_emitter_initialize, (yaml_emitter_t *emitter), (emitter), 0) \
        X(int, yaml_emitter_open, (yaml_emitter_t *emitter), (emitter), 0) \
        V(void, yaml_emitter_set_output, (yaml_emitter_t *emitter, yaml_write_handler_t *handler, void *data), (emitter, handler, data), ) \
        V(void, yaml_emitter_set_unicode, (yaml_emitter_t *emitter, int unicode), (emitter, unicode), ) \
        V(void, yaml_emitter_set_width, (yaml_emitter_t *emitter, int width), (emitter, width), ) \
        X(yaml_node_t *, yaml_document_get_node, (yaml_document_t *document, int index), (document, index), NULL) \
        X(yaml_node_t *, yaml_document_get_root_node, (yaml_document_t *document), (document), NULL) \
        V(void, yaml_parser_delete, (yaml_parser_t *parser), (parser), ) \
        X(int, yaml_parser_initialize, (yaml_parser_t *parser), (parser), 0) \
        X(int, yaml_parser_load, (yaml_parser_t *parser, yaml_document_t *document), (parser, document), 0) \
        V(void, yaml_parser_set_input_string, (yaml_parser_t *parser, const unsigned char *input, size_t size), (parser, input, size), )
/* clang-format on */

DLIB_POINTERS(SYMBOLS)
DLIB_LIBRARY(dlib_library_libyaml, "libyaml", SYMBOLS, "libyaml-0.so.2");
DLIB_FORWARDERS(SYMBOLS)
