/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

/* The libxml2 functions the WISPr parser calls, from libxml2 loaded on first use. */
typedef struct XmlApi {
        typeof(&xmlReadMemory) read_memory;
        typeof(&htmlReadMemory) html_read_memory;
        typeof(&xmlFreeDoc) free_doc;
        typeof(&xmlDocGetRootElement) doc_get_root_element;
        typeof(&xmlSetGenericErrorFunc) set_generic_error_func;
} XmlApi;

/* Loads libxml2 the first time (it stays loaded); -ELIBACC, logged once, when it cannot be
 * loaded or lacks a function. */
int xml_api_get(const XmlApi **ret);
