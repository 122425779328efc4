/* emu_runtime.cpp - the CUDA stand-in of kernels/emu/cuda_runtime.h: memory,
 * streams (queued work), events, errors, and the execution of a grid on the
 * CPU. See the header for the model. */
#undef _FORTIFY_SOURCE /* longjmp between fiber stacks is intended */
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <ucontext.h>
#include <unistd.h>
#include <vector>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GZ_EMU_FORCE_THREADS 1 /* sanitizers do not follow fiber switches */
#else
#define GZ_EMU_FORCE_THREADS 0
#endif

#define POISON 0xA5
#define MAX_SHMEM 49152u

struct gz_emu_stream {
  bool blocking;
  std::deque<std::function<void()>> q;
};
struct gz_emu_event {
  cudaStream_t s;
  bool recorded, done;
  double ms;
};

namespace {

struct alloc_t {
  size_t bytes;
  bool device;
};

std::recursive_mutex mu;
std::map<uintptr_t, alloc_t> allocs;
gz_emu_stream legacy = {true, {}};
std::vector<gz_emu_stream *> streams;
cudaError_t sticky = cudaSuccess;
thread_local cudaError_t last = cudaSuccess;
thread_local int current_device = 0;
int fail_after = 0;

int device_count() {
  const char *e = getenv("GZ_DEVICE_EMULATE");
  int n = e ? atoi(e) : 0;
  return n < 0 ? 0 : n > 16 ? 16 : n;
}

gz_emu_stream *S(cudaStream_t s) { return s ? s : &legacy; }

void flush(gz_emu_stream *s) {
  while (!s->q.empty()) {
    std::function<void()> w = std::move(s->q.front());
    s->q.pop_front();
    w();
  }
}
void flush_all() {
  flush(&legacy);
  for (gz_emu_stream *s : streams)
    flush(s);
}

cudaError_t ret(cudaError_t e) {
  if (e != cudaSuccess)
    last = e;
  return sticky != cudaSuccess ? sticky : e;
}

const alloc_t *find(const void *p, uintptr_t *base) {
  auto it = allocs.upper_bound((uintptr_t)p);
  if (it == allocs.begin())
    return nullptr;
  --it;
  if ((uintptr_t)p >= it->first + (it->second.bytes ? it->second.bytes : 1))
    return nullptr;
  if (base)
    *base = it->first;
  return &it->second;
}
bool pinned(const void *p) {
  const alloc_t *a = find(p, nullptr);
  return a != nullptr && !a->device;
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void fault(const char *kernel, const char *what, cudaError_t e) {
  fprintf(stderr, "gz CUDA emulation: kernel %s: %s\n", kernel, what);
  sticky = e;
}

/* ---- execution of a grid ------------------------------------------------- */

struct grid_t {
  const char *name;
  dim3 grid, block;
  const std::function<void()> *body;
  unsigned nthreads;
  unsigned long long nblocks;
};

gz_emu::thread_state state_of(const grid_t &g, unsigned long long b, unsigned t) {
  gz_emu::thread_state st;
  st.bid = {(unsigned)(b % g.grid.x), (unsigned)(b / g.grid.x % g.grid.y),
            (unsigned)(b / g.grid.x / g.grid.y)};
  st.tid = {t % g.block.x, t / g.block.x % g.block.y, t / g.block.x / g.block.y};
  st.bdim = g.block;
  st.gdim = g.grid;
  st.linear = t;
  st.phase = 0;
  return st;
}

/* Warp exchange slots of the running block (blocks run one at a time): two
 * generations, so a lane may write the next intrinsic's value while a slower
 * one still reads this one's (it cannot get two ahead: it meets the others
 * at every intrinsic). */
struct warp_slots {
  uint64_t v[2][32];
  int op[2][32];
};
warp_slots xchg[32];
const char *running_kernel = "?";

unsigned lanes_of(unsigned nthreads, unsigned warp) {
  unsigned left = nthreads - 32 * warp;
  return left < 32 ? left : 32;
}
unsigned full_mask(unsigned lanes) {
  return lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
}

/* Fibers: a worker runs GPU threads one after the other on its own stack
 * until one waits at a barrier (__syncthreads, or a warp intrinsic); the next
 * thread then starts on another worker. When the last thread of a barrier's
 * group (the block, or the warp) arrives, the group joins a run queue; a
 * waiting thread hands over straight to the next runnable one, and to the
 * scheduler only when none is left (it then starts the next thread, or ends
 * the block, or reports threads that wait where nobody can join them). */
/* Switching between fibers: on x86-64 a few instructions that save the
 * callee-saved registers on the stack and swap stack pointers (a warp
 * intrinsic switches 32 times, so this is the emulation's hot path);
 * elsewhere ucontext to start a fiber and _setjmp/_longjmp to switch. */
#if defined(__x86_64__) && !GZ_EMU_FORCE_THREADS
#define GZ_EMU_SWAP 1
extern "C" void gz_emu_swap(void **save_sp, void *load_sp);
__asm__(".text\n"
        ".globl gz_emu_swap\n"
        ".hidden gz_emu_swap\n"
        ".type gz_emu_swap,@function\n"
        "gz_emu_swap:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n"
        "  pushq %r15\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n"
        "  popq %rbp\n"
        "  ret\n"
        ".size gz_emu_swap,.-gz_emu_swap\n");
#else
#define GZ_EMU_SWAP 0
#endif

struct worker_t {
#if GZ_EMU_SWAP
  void *sp;
#else
  jmp_buf env;
  ucontext_t uc;
  bool started;
#endif
  char *stack;
  unsigned thread;
  int state; /* 0 idle, 1 running, 2 at a barrier */
};
const size_t FIBER_STACK = 256 * 1024;
std::vector<worker_t *> workers, idle;
#if GZ_EMU_SWAP
void *sched_sp;
#else
jmp_buf sched_env;
#endif
worker_t *cw;
struct group_t { /* threads waiting at one barrier */
  std::vector<worker_t *> w;
};
struct {
  const grid_t *g;
  std::vector<gz_emu::thread_state> st;
  unsigned next, waiting, finished;
  group_t block, warp[32];
  std::vector<worker_t *> runq;
  size_t head;
} blk;

/* The next runnable thread's worker (now the current one), or null. */
worker_t *next_runnable() {
  worker_t *n;
  if (blk.head == blk.runq.size())
    return nullptr;
  n = blk.runq[blk.head++];
  if (blk.head == blk.runq.size())
    blk.runq.clear(), blk.head = 0;
  n->state = 1;
  cw = n;
  return n;
}

/* Leave the running worker w for the next runnable thread, else for the
 * scheduler; returns when w is resumed. */
void yield_from(worker_t *w) {
#if GZ_EMU_SWAP
  worker_t *n = next_runnable();
  gz_emu_swap(&w->sp, n ? n->sp : sched_sp);
#else
  if (_setjmp(w->env))
    return;
  if (worker_t *n = next_runnable())
    _longjmp(n->env, 1);
  _longjmp(sched_env, 1);
#endif
}

void worker_main() {
  for (;;) {
    worker_t *w = cw;
    if (blk.next < blk.g->nthreads) {
      w->thread = blk.next++;
      w->state = 1;
      gz_emu::cur = &blk.st[w->thread];
      (*blk.g->body)();
      blk.finished++;
      continue;
    }
    w->state = 0;
    idle.push_back(w);
    yield_from(w);
  }
}

void resume(worker_t *w) {
  cw = w;
#if GZ_EMU_SWAP
  gz_emu_swap(&sched_sp, w->sp);
#else
  if (_setjmp(sched_env))
    return;
  if (!w->started) {
    ucontext_t here;
    w->started = true;
    swapcontext(&here, &w->uc); /* never comes back here: workers longjmp */
  }
  _longjmp(w->env, 1);
#endif
}

void fresh_context(worker_t *w) {
  w->state = 0;
#if GZ_EMU_SWAP
  { /* as if gz_emu_swap had saved it on entering worker_main */
    uintptr_t top = ((uintptr_t)w->stack + FIBER_STACK) & ~(uintptr_t)15;
    void **sp = (void **)top;
    *--sp = nullptr;                         /* worker_main's return address */
    *--sp = (void *)(uintptr_t)&worker_main; /* where gz_emu_swap returns */
    for (int i = 0; i < 6; i++)
      *--sp = nullptr; /* rbp rbx r12 r13 r14 r15 */
    w->sp = sp;
  }
#else
  w->started = false;
  getcontext(&w->uc);
  w->uc.uc_stack.ss_sp = w->stack;
  w->uc.uc_stack.ss_size = FIBER_STACK;
  w->uc.uc_link = nullptr;
  makecontext(&w->uc, worker_main, 0);
#endif
}

worker_t *idle_worker() {
  worker_t *w;
  if (!idle.empty()) {
    w = idle.back();
    idle.pop_back();
    return w;
  }
  w = new worker_t();
  w->stack = (char *)malloc(FIBER_STACK);
  fresh_context(w);
  workers.push_back(w);
  return w;
}

/* Wait at the block's barrier (warp < 0) or at warp `warp`'s. */
void fiber_sync(int warp) {
  worker_t *w = cw;
  group_t *grp = warp < 0 ? &blk.block : &blk.warp[warp];
  unsigned size = warp < 0 ? blk.g->nthreads : lanes_of(blk.g->nthreads, (unsigned)warp);
  w->state = 2;
  grp->w.push_back(w);
  blk.waiting++;
  if (grp->w.size() == size) {
    blk.runq.insert(blk.runq.end(), grp->w.begin(), grp->w.end());
    blk.waiting -= size;
    grp->w.clear();
  }
  yield_from(w);
  gz_emu::cur = &blk.st[w->thread];
}

bool run_fibers(const grid_t &g) {
  blk.g = &g;
  blk.st.resize(g.nthreads);
  running_kernel = g.name;
  memset(xchg, 0, sizeof xchg);
  for (unsigned long long b = 0; b < g.nblocks; b++) {
    for (unsigned t = 0; t < g.nthreads; t++)
      blk.st[t] = state_of(g, b, t);
    blk.next = blk.waiting = blk.finished = 0;
    while (blk.next < g.nthreads) /* start every thread; the rest follows */
      resume(idle_worker());
    if (blk.waiting) { /* nobody runnable, yet threads wait */
      fault(g.name,
            blk.finished ? "barrier divergence: some threads exited while others wait at "
                           "__syncthreads or a warp intrinsic"
                         : "barrier divergence: threads wait at different barriers "
                           "(__syncthreads / warp intrinsics) and none can go on",
            cudaErrorLaunchFailure);
      for (worker_t *w : workers) /* abandon the waiting threads */
        if (w->state == 2) {
          fresh_context(w);
          idle.push_back(w);
        }
      blk.block.w.clear();
      for (group_t &grp : blk.warp)
        grp.w.clear();
      return false;
    }
  }
  return true;
}

/* OS threads: a pool of one thread per GPU thread of a block (kept between
 * launches), every block in turn, a pthread barrier for __syncthreads and at
 * the end of each block. */
pthread_barrier_t tbar, wbar[32];
thread_local bool in_threads = false;
/* never destroyed: the pool threads wait on them until the process ends */
std::mutex &pool_mu = *new std::mutex;
std::condition_variable &pool_cv = *new std::condition_variable;
unsigned long pool_gen = 0;
unsigned pool_size = 0, pool_busy = 0, pool_busy_of_gen = 0;
const grid_t *pool_grid = nullptr;

struct pool_arg {
  unsigned t;
  unsigned long gen; /* the generation before the launch that started it */
};

void *thread_main(void *arg) {
  unsigned t = ((pool_arg *)arg)->t;
  unsigned long seen = ((pool_arg *)arg)->gen;
  gz_emu::thread_state st;
  delete (pool_arg *)arg;
  in_threads = true;
  for (;;) {
    const grid_t *g;
    {
      std::unique_lock<std::mutex> l(pool_mu);
      pool_cv.wait(l, [&] { return pool_gen != seen; });
      seen = pool_gen;
      if (t >= pool_busy_of_gen) /* not in this launch (its grid may be gone) */
        continue;
      g = pool_grid;
    }
    for (unsigned long long b = 0; b < g->nblocks; b++) {
      st = state_of(*g, b, t);
      gz_emu::cur = &st;
      (*g->body)();
      pthread_barrier_wait(&tbar);
    }
    std::lock_guard<std::mutex> l(pool_mu);
    if (--pool_busy == 0)
      pool_cv.notify_all();
  }
  return nullptr;
}

bool run_threads(const grid_t &g) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 1 << 20);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  for (; pool_size < g.nthreads; pool_size++) {
    pthread_t th;
    if (pthread_create(&th, &attr, thread_main, new pool_arg{pool_size, pool_gen}) != 0) {
      fprintf(stderr, "gz CUDA emulation: cannot start %u threads\n", g.nthreads);
      abort(); /* a barrier would never release */
    }
  }
  pthread_attr_destroy(&attr);
  pthread_barrier_init(&tbar, nullptr, g.nthreads);
  for (unsigned w = 0; 32 * w < g.nthreads; w++)
    pthread_barrier_init(&wbar[w], nullptr, lanes_of(g.nthreads, w));
  running_kernel = g.name;
  memset(xchg, 0, sizeof xchg);
  {
    std::unique_lock<std::mutex> l(pool_mu);
    pool_grid = &g;
    pool_busy = pool_busy_of_gen = g.nthreads;
    pool_gen++;
    pool_cv.notify_all();
    pool_cv.wait(l, [] { return pool_busy == 0; });
  }
  pthread_barrier_destroy(&tbar);
  for (unsigned w = 0; 32 * w < g.nthreads; w++)
    pthread_barrier_destroy(&wbar[w]);
  return true;
}

bool use_threads() {
  const char *e = getenv("GZ_EMU_THREADS");
  return GZ_EMU_FORCE_THREADS || (e && atoi(e) != 0);
}

} // namespace

thread_local gz_emu::thread_state *gz_emu::cur = nullptr;

void gz_emu::syncthreads() {
  if (in_threads)
    pthread_barrier_wait(&tbar);
  else
    fiber_sync(-1);
}

void gz_emu::device_fault(const char *what) {
  std::lock_guard<std::recursive_mutex> l(mu);
  fault(running_kernel, what, cudaErrorLaunchFailure);
}

const uint64_t *gz_emu::warp_exchange(int op, unsigned mask, uint64_t v) {
  thread_state *me = cur;
  unsigned warp = me->linear / 32, lane = me->linear % 32, gen = me->phase++ & 1;
  unsigned nthreads = me->bdim.x * me->bdim.y * me->bdim.z,
           lanes = lanes_of(nthreads, warp);
  warp_slots *x = &xchg[warp];
  x->v[gen][lane] = v;
  x->op[gen][lane] = op;
  if (in_threads)
    pthread_barrier_wait(&wbar[warp]);
  else
    fiber_sync((int)warp);
  cur = me;
  if (mask != full_mask(lanes))
    device_fault("a warp intrinsic with a mask other than the whole warp (not emulated)");
  if (lane == 0) /* one lane checks that all met at the same kind of intrinsic */
    for (unsigned l = 1; l < lanes; l++)
      if (x->op[gen][l] != op) {
        device_fault("warp divergence: the lanes of a warp are at different intrinsics");
        break;
      }
  return x->v[gen]; /* lanes past the block's end: 0 since the launch began */
}

bool gz_emu::is_device(const void *p) {
  std::lock_guard<std::recursive_mutex> l(mu);
  const alloc_t *a = find(p, nullptr);
  return a != nullptr && a->device;
}

cudaError_t gz_emu::enqueue(cudaStream_t s, std::function<void()> work) {
  std::lock_guard<std::recursive_mutex> l(mu);
  gz_emu_stream *q = S(s);
  if (sticky != cudaSuccess)
    return sticky;
  if (q == &legacy) { /* the legacy stream waits for every blocking stream */
    for (gz_emu_stream *o : streams)
      if (o->blocking)
        flush(o);
  } else if (q->blocking) { /* and they wait for it */
    flush(&legacy);
  }
  q->q.push_back(std::move(work));
  return cudaSuccess;
}

void gz_emu::inject_launch_failure(int after) {
  std::lock_guard<std::recursive_mutex> l(mu);
  fail_after = after;
}

void gz_emu::launch_(const char *name, dim3 grid, dim3 block, size_t shmem,
                     cudaStream_t s, std::function<void()> body, int bad_arg) {
  std::lock_guard<std::recursive_mutex> l(mu);
  unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
  char why[160];
  if (sticky != cudaSuccess)
    return;
  if (device_count() == 0) {
    last = cudaErrorNoDevice;
    return;
  }
  if (!block.x || !block.y || !block.z || block.x > 1024 || block.y > 1024 ||
      block.z > 64 || threads > 1024 || !grid.x || !grid.y || !grid.z ||
      grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535 || shmem > MAX_SHMEM) {
    last = cudaErrorInvalidConfiguration;
    return;
  }
  if (fail_after > 0 && --fail_after == 0) {
    last = cudaErrorLaunchOutOfResources;
    return;
  }
  if (bad_arg >= 0) {
    snprintf(why, sizeof why, "argument %d is not device memory", bad_arg);
    fault(name, why, cudaErrorIllegalAddress);
    return;
  }
  enqueue(s, [name, grid, block, body, threads]() {
    grid_t g = {name,
                grid,
                block,
                &body,
                (unsigned)threads,
                (unsigned long long)grid.x * grid.y * grid.z};
    if (sticky == cudaSuccess)
      (use_threads() ? run_threads : run_fibers)(g);
  });
}

/* ---- the runtime API ------------------------------------------------------ */

cudaError_t cudaGetDeviceCount(int *n) {
  *n = device_count();
  return *n ? cudaSuccess : ret(cudaErrorNoDevice);
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device) {
  if (device < 0 || device >= device_count())
    return ret(cudaErrorInvalidDevice);
  memset(prop, 0, sizeof *prop);
  snprintf(prop->name, sizeof prop->name, "gzstack CPU emulation (device %d)", device);
  prop->totalGlobalMem =
      (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE) / 2;
  prop->sharedMemPerBlock = MAX_SHMEM;
  prop->maxThreadsPerBlock = 1024;
  prop->maxGridSize[0] = 0x7fffffff;
  prop->maxGridSize[1] = prop->maxGridSize[2] = 65535;
  prop->maxThreadsDim[0] = prop->maxThreadsDim[1] = 1024;
  prop->maxThreadsDim[2] = 64;
  prop->warpSize = 32;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (device < 0 || device >= device_count())
    return ret(cudaErrorInvalidDevice);
  current_device = device;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int *device) {
  if (!device_count())
    return ret(cudaErrorNoDevice);
  *device = current_device;
  return cudaSuccess;
}

cudaError_t cudaGetLastError(void) {
  cudaError_t e = sticky != cudaSuccess ? sticky : last;
  last = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError(void) { return sticky != cudaSuccess ? sticky : last; }

const char *cudaGetErrorString(cudaError_t err) {
  switch (err) {
  case cudaSuccess:
    return "no error";
  case cudaErrorInvalidValue:
    return "invalid argument";
  case cudaErrorMemoryAllocation:
    return "out of memory";
  case cudaErrorInvalidConfiguration:
    return "invalid configuration argument (launch limits)";
  case cudaErrorNoDevice:
    return "no CUDA-capable device is detected (CPU emulation: GZ_DEVICE_EMULATE=1 "
           "shows one)";
  case cudaErrorInvalidDevice:
    return "invalid device ordinal";
  case cudaErrorInvalidResourceHandle:
    return "invalid resource handle";
  case cudaErrorNotReady:
    return "device not ready";
  case cudaErrorIllegalAddress:
    return "an illegal memory access was encountered";
  case cudaErrorLaunchOutOfResources:
    return "too many resources requested for launch";
  case cudaErrorLaunchFailure:
    return "unspecified launch failure";
  }
  return "unknown error";
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes *attr, const void *p) {
  std::lock_guard<std::recursive_mutex> l(mu);
  uintptr_t base = 0;
  const alloc_t *a = find(p, &base);
  memset(attr, 0, sizeof *attr);
  attr->type = !a          ? cudaMemoryTypeUnregistered
               : a->device ? cudaMemoryTypeDevice
                           : cudaMemoryTypeHost;
  attr->device = a ? 0 : -2;
  attr->devicePointer = a && a->device ? (void *)p : nullptr;
  attr->hostPointer = a && !a->device ? (void *)p : nullptr;
  return cudaSuccess;
}

static cudaError_t alloc(void **p, size_t bytes, bool device) {
  std::lock_guard<std::recursive_mutex> l(mu);
  *p = nullptr;
  if (!device_count())
    return ret(cudaErrorNoDevice);
  if (!(*p = malloc(bytes ? bytes : 1)))
    return ret(cudaErrorMemoryAllocation);
  memset(*p, POISON, bytes);
  allocs[(uintptr_t)*p] = {bytes, device};
  return cudaSuccess;
}
static cudaError_t release(void *p, bool device) {
  std::lock_guard<std::recursive_mutex> l(mu);
  auto it = allocs.find((uintptr_t)p);
  if (!p)
    return cudaSuccess;
  if (it == allocs.end() || it->second.device != device)
    return ret(cudaErrorInvalidValue);
  flush_all(); /* cudaFree synchronises the device */
  allocs.erase(it);
  free(p);
  return cudaSuccess;
}
cudaError_t cudaMalloc(void **p, size_t bytes) { return alloc(p, bytes, true); }
cudaError_t cudaFree(void *p) { return release(p, true); }
cudaError_t cudaMallocHost(void **p, size_t bytes) { return alloc(p, bytes, false); }
cudaError_t cudaFreeHost(void *p) { return release(p, false); }

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags) {
  std::lock_guard<std::recursive_mutex> l(mu);
  if (!device_count())
    return ret(cudaErrorNoDevice);
  *s = new gz_emu_stream{(flags & cudaStreamNonBlocking) == 0, {}};
  streams.push_back(*s);
  return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t *s) {
  return cudaStreamCreateWithFlags(s, cudaStreamDefault);
}
cudaError_t cudaStreamDestroy(cudaStream_t s) {
  std::lock_guard<std::recursive_mutex> l(mu);
  auto it = std::find(streams.begin(), streams.end(), s);
  if (it == streams.end())
    return ret(cudaErrorInvalidResourceHandle);
  flush(s);
  streams.erase(it);
  delete s;
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  std::lock_guard<std::recursive_mutex> l(mu);
  if (s && std::find(streams.begin(), streams.end(), s) == streams.end())
    return ret(cudaErrorInvalidResourceHandle);
  flush(S(s));
  return ret(cudaSuccess);
}
cudaError_t cudaDeviceSynchronize(void) {
  std::lock_guard<std::recursive_mutex> l(mu);
  flush_all();
  return ret(cudaSuccess);
}

/* Pageable host memory behaves as in CUDA: a copy from it reads the source
 * at the call, a copy to it returns when done; pinned memory and device
 * memory are read and written when the stream gets there. */
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t s) {
  std::lock_guard<std::recursive_mutex> l(mu);
  bool dev_src, dev_dst;
  cudaError_t e;
  if (!bytes)
    return ret(cudaSuccess);
  if (!dst || !src)
    return ret(cudaErrorInvalidValue);
  dev_src = gz_emu::is_device(src);
  dev_dst = gz_emu::is_device(dst);
  if ((kind == cudaMemcpyHostToDevice && (dev_src || !dev_dst)) ||
      (kind == cudaMemcpyDeviceToHost && (!dev_src || dev_dst)) ||
      (kind == cudaMemcpyDeviceToDevice && (!dev_src || !dev_dst)))
    return ret(cudaErrorInvalidValue);
  if (!dev_src && !pinned(src)) {
    std::shared_ptr<std::vector<unsigned char>> copy(new std::vector<unsigned char>(
        (const unsigned char *)src, (const unsigned char *)src + bytes));
    e = gz_emu::enqueue(s, [dst, copy]() { memcpy(dst, copy->data(), copy->size()); });
  } else {
    e = gz_emu::enqueue(s, [dst, src, bytes]() { memmove(dst, src, bytes); });
  }
  if (e == cudaSuccess && !dev_dst && !pinned(dst))
    flush(S(s));
  return ret(e);
}
cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind) {
  std::lock_guard<std::recursive_mutex> l(mu);
  cudaError_t e = cudaMemcpyAsync(dst, src, bytes, kind, nullptr);
  if (e == cudaSuccess)
    flush(&legacy);
  return ret(e);
}
cudaError_t cudaMemsetAsync(void *dst, int value, size_t bytes, cudaStream_t s) {
  std::lock_guard<std::recursive_mutex> l(mu);
  uintptr_t base = 0;
  const alloc_t *a = find(dst, &base);
  if (!bytes)
    return ret(cudaSuccess);
  if (!a || !a->device || (uintptr_t)dst + bytes > base + a->bytes)
    return ret(cudaErrorInvalidValue);
  return ret(gz_emu::enqueue(s, [dst, value, bytes]() { memset(dst, value, bytes); }));
}

cudaError_t cudaEventCreate(cudaEvent_t *e) {
  if (!device_count())
    return ret(cudaErrorNoDevice);
  *e = new gz_emu_event{nullptr, false, false, 0.0};
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  std::lock_guard<std::recursive_mutex> l(mu);
  if (e && e->recorded && !e->done)
    flush(S(e->s));
  delete e;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  std::lock_guard<std::recursive_mutex> l(mu);
  if (!e)
    return ret(cudaErrorInvalidResourceHandle);
  e->s = s;
  e->recorded = true;
  e->done = false;
  return ret(gz_emu::enqueue(s, [e]() {
    e->ms = now_ms();
    e->done = true;
  }));
}
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  std::lock_guard<std::recursive_mutex> l(mu);
  if (!e || !e->recorded)
    return ret(cudaErrorInvalidResourceHandle);
  flush(S(e->s));
  return ret(cudaSuccess);
}
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t stop) {
  if (!start || !stop)
    return ret(cudaErrorInvalidResourceHandle);
  if (!start->done || !stop->done)
    return ret(cudaErrorNotReady);
  *ms = (float)(stop->ms - start->ms);
  return cudaSuccess;
}
