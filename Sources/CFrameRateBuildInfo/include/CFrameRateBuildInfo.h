#ifndef CFRAMERATE_BUILD_INFO_H
#define CFRAMERATE_BUILD_INFO_H

/// The git commit the binaries were built from ("" when unknown, e.g. a build from a
/// source tarball). Package.swift defines FRAMERATED_GIT_COMMIT from the environment
/// variable of the same name, which the Makefile sets from `git rev-parse`; it is a C
/// macro because a Swift `-D` define cannot carry a value.
const char *framerated_build_commit(void);

#endif
