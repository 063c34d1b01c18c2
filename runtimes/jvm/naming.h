/* SPDX-License-Identifier: MIT */
#ifndef LETW_JVM_NAMING_H
#define LETW_JVM_NAMING_H

#include <stddef.h>

/*
 * Java names as lttng-etw records them. Pure functions on UTF-8 (convert
 * JVMTI's modified UTF-8 with jvm_mutf8_to_utf8 first), writing into a
 * caller buffer of cap bytes (always NUL-terminated, cut at a character
 * boundary when too long): no allocation, callable on any callback path.
 */

/* How the namespace (the declaring class) is written. */
enum jvm_ns_style {
	JVM_NS_DOTTED = 0, /* com.example.Foo$Inner (Class.getName()) */
	JVM_NS_SIMPLE,     /* Foo$Inner: no package */
	JVM_NS_JVM,        /* Lcom/example/Foo$Inner; as JVMTI gives it */
};

/* How the signature is written. */
enum jvm_sig_style {
	JVM_SIG_DESCRIPTOR = 0, /* (I[Ljava/lang/String;)J, the JVM's own */
	JVM_SIG_JAVA,           /* (int, java.lang.String[]): parameters only */
	JVM_SIG_SIMPLE,         /* (int, String[]): no packages */
	JVM_SIG_NONE,           /* empty */
};

/* JVMTI's class signature (modified UTF-8) into out as UTF-8, like
 * jvm_mutf8_to_utf8; when it does not fit, a class type ("L...;") is cut
 * inside its name and keeps its closing ';', so jvm_name_class and
 * jvm_source_path still read it as a class (a shortened one) instead of
 * falling back to the raw JVM form. */
size_t jvm_class_sig_to_utf8(const char *mutf8_sig, char *out, size_t cap);

/* Class signature ("Lcom/example/Foo;") to the namespace. */
size_t jvm_name_class(const char *class_sig, enum jvm_ns_style style, char *out,
		      size_t cap);

/* Method descriptor ("(IJ)V") to the signature. A malformed descriptor is
 * copied unchanged. */
size_t jvm_name_signature(const char *desc, enum jvm_sig_style style, char *out,
			  size_t cap);

/* Source path of a class: its package directory plus the SourceFile
 * attribute ("Lcom/example/Foo$Bar;" + "Foo.java" -> com/example/Foo.java),
 * which is what debuggers and perf resolve against a source root. An
 * empty or NULL source_file gives "". */
size_t jvm_source_path(const char *class_sig, const char *source_file, char *out,
		       size_t cap);

/*
 * Method handle intrinsics (MethodHandle.invokeBasic, linkToStatic, ...: one
 * native wrapper per basic-type signature, made by the VM) have no usable
 * jmethodID: HotSpot builds their Method outside MethodHandle's method
 * array, with method_idnum 0, and jmethodIDs are cached per class by idnum,
 * so every intrinsic's CompiledMethodLoad carries the same jmethodID, the
 * one of whichever Method asked for slot 0 first (another intrinsic, or
 * MethodHandle's first method). Its name and signature are another
 * method's: the agent publishes JVM_MH_INTRINSIC_NAME with
 * JVM_MH_INTRINSIC_DESC (what every signature-polymorphic method declares,
 * (Object...)Object, of which each intrinsic is a basic-type instance) and
 * method_id 0 instead.
 *
 * Whether the code reported for a method of class class_sig is one: the
 * class is java.lang.invoke.MethodHandle and the code is a native wrapper
 * (npcs, the inline record's pc count, is 0: C1 and C2 code always has
 * pcs; npcs < 0, no record: the resolved method is native). MethodHandle
 * declares no native methods but the signature-polymorphic ones, so its
 * only native wrappers are the intrinsics.
 */
#define JVM_MH_INTRINSIC_NAME "<intrinsic>"
#define JVM_MH_INTRINSIC_DESC "([Ljava/lang/Object;)Ljava/lang/Object;"
int jvm_is_mh_intrinsic(const char *class_sig, int npcs, int native);

#endif
