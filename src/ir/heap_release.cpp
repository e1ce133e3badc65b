#include "ir/heap_release.h"

#include <dlfcn.h>
#include <malloc.h>

namespace graphsub {

void release_free_memory() {
  // Looked up at run time: the graphsub command links tcmalloc, the libraries and the tests
  // need not (GRAPHSUB_TCMALLOC=OFF builds run on glibc's allocator).
  using Release = void (*)();
  static const Release tcmalloc_release =
      reinterpret_cast<Release>(dlsym(RTLD_DEFAULT, "MallocExtension_ReleaseFreeMemory"));
  if (tcmalloc_release)
    tcmalloc_release();
  else
    malloc_trim(0);
}

}  // namespace graphsub
