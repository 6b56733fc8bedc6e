// The smallest C interface core needs from gloo (the collectives under torch.distributed's CPU backend): connect a
// full mesh of TCP pairs through a file store, all-reduce fp32 sums, all-gather u64s, and a barrier. Built by
// core/build.rs into a shared library that core embeds and loads at run time (src/collective/gloo.rs), so a process
// that never trains across processes never needs libgloo. Every function catches every C++ exception: none may
// cross into Rust. Each fills `error` (a message, NUL-terminated, truncated to `capacity`) and returns a kind:
// 0 ok, 1 a timeout, 2 a connection lost or refused, 3 anything else.

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <strings.h>
#include <memory>
#include <string>

namespace {

struct Group {
  std::shared_ptr<gloo::rendezvous::Context> context;
  std::chrono::milliseconds timeout;
};

int report(const std::string& message, int kind, char* error, size_t capacity) {
  if (capacity > 0) {
    size_t n = message.size() < capacity - 1 ? message.size() : capacity - 1;
    std::memcpy(error, message.data(), n);
    error[n] = '\0';
  }
  return kind;
}

// gloo says "Timed out" (a pair) or "Wait timeout" (the store) and throws no type of its own for either.
bool timed_out(const std::exception& e) {
  return strcasestr(e.what(), "timed out") != nullptr || strcasestr(e.what(), "timeout") != nullptr;
}

template <typename F>
int guarded(F&& f, char* error, size_t capacity) {
  try {
    f();
    return 0;
  } catch (const gloo::IoException& e) {
    return report(e.what(), timed_out(e) ? 1 : 2, error, capacity);
  } catch (const std::exception& e) {
    return report(e.what(), timed_out(e) ? 1 : 3, error, capacity);
  } catch (...) {
    return report("an unknown C++ exception", 3, error, capacity);
  }
}

}  // namespace

extern "C" {

// Connects rank `rank` of `size` through the file store at `store` (a directory every rank sees), listening on
// `hostname`. On success `*out` holds the group and every rank has connected; each rank has then removed the
// store files it wrote, so the directory is left empty once every rank returned.
int uform_gloo_connect(const char* store, const char* hostname, int rank, int size, int64_t timeout_ms, void** out,
                       char* error, size_t capacity) {
  *out = nullptr;
  std::unique_ptr<gloo::rendezvous::FileStore> files;
  int kind = guarded(
      [&] {
        gloo::transport::tcp::attr attr;
        attr.hostname = hostname;
        auto device = gloo::transport::tcp::CreateDevice(attr);
        files.reset(new gloo::rendezvous::FileStore(store));
        auto timeout = std::chrono::milliseconds(timeout_ms);
        auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
        context->setTimeout(timeout);
        context->connectFullMesh(*files, device);
        // Every rank has read every address once all have connected: the files can go.
        gloo::BarrierOptions barrier(context);
        barrier.setTimeout(timeout);
        gloo::barrier(barrier);
        *out = new Group{context, timeout};
      },
      error, capacity);
  if (files) {
    for (const auto& path : files->getAllKeyFilePaths()) {
      unlink(path.c_str());
    }
  }
  return kind;
}

// Sums `count` floats in place across the group (ring all-reduce).
int uform_gloo_all_reduce_f32(void* group, float* data, size_t count, char* error, size_t capacity) {
  auto* g = static_cast<Group*>(group);
  return guarded(
      [&] {
        gloo::AllreduceOptions options(g->context);
        options.setOutput(data, count);
        options.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
        options.setReduceFunction(
            static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
        options.setTimeout(g->timeout);
        gloo::allreduce(options);
      },
      error, capacity);
}

// Gathers `count` u64s from every rank into `out` (`count · size` values, in rank order).
int uform_gloo_all_gather_u64(void* group, const uint64_t* in, size_t count, uint64_t* out, char* error,
                              size_t capacity) {
  auto* g = static_cast<Group*>(group);
  return guarded(
      [&] {
        gloo::AllgatherOptions options(g->context);
        options.setInput(const_cast<uint64_t*>(in), count);
        options.setOutput(out, count * g->context->size);
        options.setTimeout(g->timeout);
        gloo::allgather(options);
      },
      error, capacity);
}

// Returns once every rank has entered it.
int uform_gloo_barrier(void* group, char* error, size_t capacity) {
  auto* g = static_cast<Group*>(group);
  return guarded(
      [&] {
        gloo::BarrierOptions options(g->context);
        options.setTimeout(g->timeout);
        gloo::barrier(options);
      },
      error, capacity);
}

void uform_gloo_free(void* group) {
  try {
    delete static_cast<Group*>(group);
  } catch (...) {
  }
}

}  // extern "C"
