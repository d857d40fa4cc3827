/*
 * triton-backend-sdk native plugin ABI.
 *
 * A native plugin is a shared library that gives kernels compiled by SDK backends (cpu_ref and backends derived
 * from it) functions to call: a kernel calls `tl.extern_elementwise("", "", [x], {(tl.float32,): ("sym", tl.float32)},
 * is_pure=True)` and the JIT resolves "sym" against the symbol tables of the loaded plugins.
 *
 * The library exports ONE C function, TSDK_PLUGIN_ENTRY ("tsdk_plugin_info"), returning a pointer to a static
 * `tsdk_plugin` that stays valid while the library is loaded. The SDK dlopen()s the library, calls the entry
 * point, checks `api_version`, then calls `init` (if set) once; `teardown` (if set) runs at process exit.
 *
 * Stability rules (the ABI's contract, also in the README):
 *   1. TSDK_PLUGIN_API_VERSION changes only when an existing field changes meaning, type or position. The SDK
 *      refuses a plugin whose api_version it does not support, naming both versions.
 *   2. Within one api_version, fields are only ever appended at the end. `struct_size` is what the plugin was built
 *      with; the SDK reads a field only if it lies within `struct_size`, so an older plugin keeps loading in a newer
 *      SDK of the same api_version, and a newer plugin loads in an older SDK that ignores the fields it lacks.
 *   3. Plain C only: fixed-width integers, `const char *` (UTF-8, NUL-terminated, owned by the plugin), function
 *      pointers. No C++ types, no structs passed by value, no ownership transfer of memory across the boundary.
 *   4. Symbols are called with the C calling convention of the platform, with the signature the kernel declares
 *      through extern_elementwise (scalar arguments and result: float/double/intN_t). A symbol must be pure when
 *      the kernel says is_pure=True and must be callable concurrently from several threads (programs run in parallel).
 *      `signatures` (appended in 0.1.0; optional) gives each symbol's C prototype without names, e.g.
 *      "float(float, float)" or "int32_t(int32_t)" (float, double, int8_t..int64_t, uint8_t..uint64_t): a kernel
 *      that declares the symbol otherwise is refused at compile time instead of running with garbage. A NULL array
 *      or entry leaves that symbol unchecked; a malformed one refuses the load.
 *   5. Symbol names share one namespace with every other loaded plugin: prefix them with the plugin's name. A name
 *      defined by two loaded plugins is an error that names both.
 *   6. A symbol's behaviour is part of the plugin's `version`; the SDK also hashes the library file into its compile
 *      cache key, so a rebuilt library recompiles the kernels that use it.
 */
#ifndef TRITON_BACKEND_SDK_PLUGIN_H
#define TRITON_BACKEND_SDK_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TSDK_PLUGIN_API_VERSION 1u
#define TSDK_PLUGIN_ENTRY tsdk_plugin_info
#define TSDK_PLUGIN_ENTRY_NAME "tsdk_plugin_info"

#if defined(_WIN32)
#define TSDK_EXPORT __declspec(dllexport)
#else
#define TSDK_EXPORT __attribute__((visibility("default")))
#endif

/* One callable symbol: `address` is a function pointer cast to void *. */
typedef struct tsdk_symbol {
    const char *name;
    void *address;
} tsdk_symbol;

/* Version 1 of the plugin descriptor. Append-only (rule 2). */
typedef struct tsdk_plugin {
    uint32_t api_version;        /* TSDK_PLUGIN_API_VERSION the plugin was built against */
    uint32_t struct_size;        /* sizeof(tsdk_plugin) as the plugin was built */
    const char *name;            /* plugin name, e.g. "acme_math" */
    const char *version;         /* plugin version, e.g. "1.2.0" */
    uint64_t num_symbols;        /* entries in `symbols` */
    const tsdk_symbol *symbols;  /* symbol table */
    int32_t (*init)(void);       /* optional: 0 on success; any other value refuses the load */
    void (*teardown)(void);      /* optional: called once at process exit */
    const char *const *signatures; /* optional, appended: num_symbols C prototypes parallel to `symbols` (rule 4) */
} tsdk_plugin;

typedef const tsdk_plugin *(*tsdk_plugin_entry_fn)(void);

/* Declare the entry point in a plugin: `TSDK_EXPORT const tsdk_plugin *tsdk_plugin_info(void) { return &p; }` */
TSDK_EXPORT const tsdk_plugin *TSDK_PLUGIN_ENTRY(void);

#ifdef __cplusplus
}
#endif

#endif /* TRITON_BACKEND_SDK_PLUGIN_H */
