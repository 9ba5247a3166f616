//===- AllocationCounter.cpp - Counting heap allocations during steps -----===//
//
// Defining malloc and friends in the executable interposes them for the
// whole process (glibc looks symbols up in the executable first), so
// allocations by libstdc++ (operator new), OpenBLAS and the runtime are all
// seen. Each forwards to glibc's own entry points (__libc_malloc, ...),
// which glibc exports for exactly this purpose. When counting is off the
// cost is one relaxed load per call.
//
// Sanitizer builds replace the allocator themselves; there the functions
// are not defined and counting reports unavailable.
//
//===----------------------------------------------------------------------===//

#include "AllocationCounter.h"

#include <atomic>
#include <cerrno>
#include <cstddef>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) ||    \
    __has_feature(thread_sanitizer)
#define REMAT_ALLOCATOR_OWNED_BY_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define REMAT_ALLOCATOR_OWNED_BY_SANITIZER 1
#endif
#if !defined(__GLIBC__) && !defined(__linux__)
#define REMAT_ALLOCATOR_OWNED_BY_SANITIZER 1
#endif

namespace {

std::atomic<bool> counting{false};
std::atomic<int64_t> allocations{0};

inline void noteAllocation() {
  if (counting.load(std::memory_order_relaxed))
    allocations.fetch_add(1, std::memory_order_relaxed);
}

} // namespace

namespace remat::rt::harness {

void beginCountingAllocations() {
  counting.store(true, std::memory_order_seq_cst);
}

void endCountingAllocations() {
  counting.store(false, std::memory_order_seq_cst);
}

int64_t countedAllocations() {
  return allocationCountingAvailable()
             ? allocations.load(std::memory_order_seq_cst)
             : -1;
}

bool allocationCountingAvailable() {
#ifdef REMAT_ALLOCATOR_OWNED_BY_SANITIZER
  return false;
#else
  return true;
#endif
}

} // namespace remat::rt::harness

#ifndef REMAT_ALLOCATOR_OWNED_BY_SANITIZER

extern "C" {
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t count, size_t size);
void *__libc_realloc(void *pointer, size_t size);
void *__libc_memalign(size_t alignment, size_t size);
void *__libc_valloc(size_t size);
void *__libc_pvalloc(size_t size);
void __libc_free(void *pointer);

void *malloc(size_t size) {
  noteAllocation();
  return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
  noteAllocation();
  return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
  noteAllocation();
  return __libc_realloc(pointer, size);
}

void free(void *pointer) { __libc_free(pointer); }

void *memalign(size_t alignment, size_t size) {
  noteAllocation();
  return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
  noteAllocation();
  return __libc_memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
  if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0)
    return EINVAL;
  noteAllocation();
  void *pointer = __libc_memalign(alignment, size);
  if (!pointer && size)
    return ENOMEM;
  *out = pointer;
  return 0;
}

void *valloc(size_t size) {
  noteAllocation();
  return __libc_valloc(size);
}

void *pvalloc(size_t size) {
  noteAllocation();
  return __libc_pvalloc(size);
}
} // extern "C"

#endif // REMAT_ALLOCATOR_OWNED_BY_SANITIZER
