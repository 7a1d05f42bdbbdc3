/* C++ symbol names made readable, with the C++ runtime's demangler (the
 * one c++filt and trace_processor agree with). */
#ifndef PROFCONV_DEMANGLE_H
#define PROFCONV_DEMANGLE_H

/* The demangled form of an Itanium-mangled name ("_Z..."), malloc'd, or
 * NULL when name is not mangled or cannot be demangled (or memory ran
 * out); the caller then keeps name. */
char *pc_demangle(const char *name);

#endif
