// triton_backend_sdk._native: the static launcher for CPU kernels.
//
// A compiled kernel exports one C entry point:
//
//   void entry(void **args, int32_t gx, int32_t gy, int32_t gz,
//              int64_t start, int64_t end);
//
// It runs the Triton programs whose linear ids lie in [start, end)
// (pid_x = lin % gx, pid_y = (lin / gx) % gy, pid_z = lin / (gx * gy)).
// args[i] points at the value of the i-th *runtime* argument (constexprs are
// not passed), each value in its own zero-initialised 8-byte slot owned by the
// launcher: pointers as void*, integers at their width, fp16/bf16 as uint16_t
// bits, i1 as int8_t 0/1.
//
// Launcher.__call__ follows Triton's launcher calling convention:
//   (gx, gy, gz, stream, function, packed_metadata, launch_metadata,
//    launch_enter_hook, launch_exit_hook, *args)
// Arguments are converted with the GIL held; the programs then run with the
// GIL released on a persistent thread pool in which the calling thread takes
// part.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace py = pybind11;

namespace tbs {

// ---------------------------------------------------------------------------
// Argument kinds
// ---------------------------------------------------------------------------

enum Kind : int {
  KIND_SKIP = 0,
  KIND_PTR = 1,
  KIND_I1 = 2,
  KIND_I8 = 3,
  KIND_I16 = 4,
  KIND_I32 = 5,
  KIND_I64 = 6,
  KIND_U8 = 7,
  KIND_U16 = 8,
  KIND_U32 = 9,
  KIND_U64 = 10,
  KIND_FP16 = 11,
  KIND_BF16 = 12,
  KIND_FP32 = 13,
  KIND_FP64 = 14,
  KIND_COUNT = 15,
};

constexpr const char *kKindNames[KIND_COUNT] = {
    "skip", "ptr", "i1",  "i8",   "i16",  "i32",  "i64", "u8",
    "u16",  "u32", "u64", "fp16", "bf16", "fp32", "fp64",
};

constexpr int kAbiVersion = 1;
// Slots for up to this many runtime arguments live on the stack; more fall
// back to a heap vector.
constexpr int kInlineArgs = 64;
constexpr int kFixedCallArgs = 9;  // gx .. launch_exit_hook

using EntryFn = void (*)(void **, int32_t, int32_t, int32_t, int64_t, int64_t);

// ---------------------------------------------------------------------------
// double -> fp16 / bf16 bits, round to nearest even, directly from double (no
// double rounding through float). Overflow gives +-inf, NaN gives a quiet NaN.
// ---------------------------------------------------------------------------

template <int EBITS, int MBITS>
uint16_t double_to_narrow_bits(double d) {
  constexpr int kBias = (1 << (EBITS - 1)) - 1;
  constexpr uint32_t kExpMask = (1u << EBITS) - 1;
  constexpr uint32_t kInf = kExpMask << MBITS;
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  const uint32_t sign = static_cast<uint32_t>(bits >> 63) << (EBITS + MBITS);
  const int dexp = static_cast<int>((bits >> 52) & 0x7ff);
  const uint64_t dman = bits & ((uint64_t{1} << 52) - 1);
  if (dexp == 0x7ff) {
    if (dman != 0) return static_cast<uint16_t>(sign | kInf | (1u << (MBITS - 1)));  // quiet NaN
    return static_cast<uint16_t>(sign | kInf);
  }
  if (dexp == 0) return static_cast<uint16_t>(sign);  // zero or double subnormal: far below the target range
  const int e = dexp - 1023;                           // value = sig * 2^(e - 52)
  if (e > kBias) return static_cast<uint16_t>(sign | kInf);
  const uint64_t sig = dman | (uint64_t{1} << 52);
  const bool subnormal = e < 1 - kBias;
  const int quantum_exp = (subnormal ? 1 - kBias : e) - MBITS;  // value of one unit in the last place
  const int shift = quantum_exp - (e - 52);                     // >= 52 - MBITS > 0
  if (shift >= 64) return static_cast<uint16_t>(sign);         // below half the smallest subnormal
  uint64_t r = sig >> shift;
  const uint64_t rem = sig & ((uint64_t{1} << shift) - 1);
  const uint64_t half = uint64_t{1} << (shift - 1);
  if (rem > half || (rem == half && (r & 1))) ++r;
  // Subnormal: the encoding is the number of quanta (a carry into 2^MBITS is
  // exactly the smallest normal). Normal: r includes the implicit leading one.
  uint64_t enc = subnormal ? r : ((static_cast<uint64_t>(e + kBias - 1) << MBITS) + r);
  if (enc >= kInf) enc = kInf;
  return static_cast<uint16_t>(sign | static_cast<uint32_t>(enc));
}

inline uint16_t double_to_fp16_bits(double d) { return double_to_narrow_bits<5, 10>(d); }
inline uint16_t double_to_bf16_bits(double d) { return double_to_narrow_bits<8, 7>(d); }

// ---------------------------------------------------------------------------
// Thread pool
// ---------------------------------------------------------------------------

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield" ::: "memory");
#else
  std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

// How long an idle worker spins for the next launch before sleeping, and how
// long the caller spins waiting for workers before sleeping.
constexpr auto kWorkerSpin = std::chrono::microseconds(50);
constexpr auto kCallerSpin = std::chrono::microseconds(200);

// Chunks of programs per thread of a launch: small enough that a Ctrl-C stops a long launch soon (the calling
// thread checks for signals between its chunks), large enough that taking a chunk (one atomic add) costs nothing.
constexpr int64_t kChunksPerThread = 16;
// How often the calling thread takes the GIL between chunks to let Python see a pending signal.
constexpr auto kSignalPoll = std::chrono::milliseconds(20);

struct Job {
  EntryFn fn;
  void **args;
  int32_t gx, gy, gz;
  int64_t total;
  int64_t chunk;
  std::atomic<int64_t> next{0};
  // set when a signal handler raised in Python: no chunk starts after it
  std::atomic<bool> cancel{false};
};

// Called by the launching thread between its chunks (GIL released): every kSignalPoll it takes the GIL and runs
// Python's pending signal handlers; one that raises (KeyboardInterrupt) cancels the job, its exception stays set.
class SignalPoll {
 public:
  void operator()(Job *job) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < kSignalPoll) return;
    last_ = now;
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) job->cancel.store(true, std::memory_order_relaxed);
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

inline void run_chunks(Job *job, SignalPoll *poll = nullptr) {
  const int64_t total = job->total;
  const int64_t chunk = job->chunk;
  for (;;) {
    if (job->cancel.load(std::memory_order_relaxed)) return;
    const int64_t start = job->next.fetch_add(chunk, std::memory_order_relaxed);
    if (start >= total) return;
    const int64_t end = std::min(start + chunk, total);
    job->fn(job->args, job->gx, job->gy, job->gz, start, end);
    if (poll != nullptr) (*poll)(job);
  }
}

template <typename Pred>
bool spin_until(Pred pred, std::chrono::microseconds budget) {
  auto deadline = std::chrono::steady_clock::time_point{};
  for (unsigned i = 1;; ++i) {
    if (pred()) return true;
    cpu_relax();
    if ((i & 63) == 0) {
      const auto now = std::chrono::steady_clock::now();
      if (deadline == std::chrono::steady_clock::time_point{})
        deadline = now + budget;
      else if (now >= deadline)
        return false;
    }
  }
}

class Pool {
 public:
  explicit Pool(int workers) {
    threads_.reserve(workers);
    try {
      for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { worker_main(); });
    } catch (...) {
      stop_and_join();  // never destroy joinable threads
      throw;
    }
  }

  int workers() const { return static_cast<int>(threads_.size()); }

  void stop_and_join() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
      gen_.fetch_add(1, std::memory_order_release);
    }
    work_cv_.notify_all();
    for (auto &t : threads_) t.join();
    threads_.clear();
  }

  // Runs every chunk of `job`; the calling thread takes part. `wanted` is how
  // many workers can usefully join. Returns when all joined workers are done.
  void run(Job *job, int wanted, SignalPoll *poll) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      job_ = job;
      open_ = true;
      gen_.fetch_add(1, std::memory_order_release);
    }
    if (wanted >= workers()) {
      work_cv_.notify_all();
    } else {
      for (int i = 0; i < wanted; ++i) work_cv_.notify_one();
    }
    run_chunks(job, poll);
    {
      std::lock_guard<std::mutex> lk(mu_);
      open_ = false;  // no worker joins after this point
      job_ = nullptr;
    }
    auto idle = [this] { return active_.load(std::memory_order_acquire) == 0; };
    if (!spin_until(idle, kCallerSpin)) {
      std::unique_lock<std::mutex> lk(mu_);
      done_cv_.wait(lk, idle);
    }
  }

 private:
  void worker_main() {
    // Asynchronous signals (SIGINT, SIGCHLD, ...) go to Python's threads. The synchronous ones a fault raises in this
    // thread stay unblocked: a blocked SIGSEGV from kernel code makes the kernel reset it to the default action and
    // end the process without running any handler (no faulthandler stack, no log line: how CI lost xdist workers).
    sigset_t all;
    sigfillset(&all);
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP}) sigdelset(&all, sig);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    uint64_t seen;
    {
      std::lock_guard<std::mutex> lk(mu_);
      seen = gen_.load(std::memory_order_relaxed);
    }
    for (;;) {
      spin_until([&] { return gen_.load(std::memory_order_acquire) != seen; }, kWorkerSpin);
      std::unique_lock<std::mutex> lk(mu_);
      work_cv_.wait(lk, [&] { return stop_ || gen_.load(std::memory_order_relaxed) != seen; });
      if (stop_) return;
      seen = gen_.load(std::memory_order_relaxed);
      if (!open_) continue;  // that launch already finished
      Job *job = job_;
      active_.fetch_add(1, std::memory_order_relaxed);
      lk.unlock();
      run_chunks(job);
      if (active_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> g(mu_);
        done_cv_.notify_one();
      }
    }
  }

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  std::atomic<uint64_t> gen_{0};
  std::atomic<int> active_{0};
  Job *job_ = nullptr;  // guarded by mu_
  bool open_ = false;   // guarded by mu_
  bool stop_ = false;   // guarded by mu_
  std::vector<std::thread> threads_;
};

// Everything a fork child must not inherit lives here; the child drops the
// pointer (leaking the parent's copy, whose threads do not exist in the child
// and whose mutexes may be held) and the next launch builds a fresh one.
struct PoolState {
  std::mutex launch_mu;  // serialises pooled launches
  Pool *pool = nullptr;  // guarded by launch_mu
};

std::atomic<PoolState *> g_state{nullptr};
std::atomic<int> g_num_threads{0};

int default_num_threads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const unsigned hc = std::thread::hardware_concurrency();
  return hc > 0 ? static_cast<int>(hc) : 1;
}

PoolState *get_state() {
  PoolState *s = g_state.load(std::memory_order_acquire);
  if (s != nullptr) return s;
  auto *fresh = new PoolState();
  if (g_state.compare_exchange_strong(s, fresh, std::memory_order_acq_rel)) return fresh;
  delete fresh;
  return s;
}

void atfork_child() { g_state.store(nullptr, std::memory_order_relaxed); }

// Runs programs [0, total). Called without the GIL.
// Runs every program of a launch; false when a signal handler raised between chunks (the Python exception is set,
// the programs not yet started did not run).
bool execute(EntryFn fn, void **args, int32_t gx, int32_t gy, int32_t gz, int64_t total) {
  const int threads = g_num_threads.load(std::memory_order_relaxed);
  SignalPoll poll;
  Job job;
  job.fn = fn;
  job.args = args;
  job.gx = gx;
  job.gy = gy;
  job.gz = gz;
  job.total = total;
  if (total == 1 || threads <= 1) {
    job.chunk = std::max<int64_t>(1, total / kChunksPerThread);
    run_chunks(&job, &poll);
    return !job.cancel.load(std::memory_order_relaxed);
  }
  PoolState *state = get_state();
  std::lock_guard<std::mutex> lk(state->launch_mu);
  if (state->pool == nullptr || state->pool->workers() != threads - 1) {
    if (state->pool != nullptr) {
      state->pool->stop_and_join();
      delete state->pool;
      state->pool = nullptr;
    }
    state->pool = new Pool(threads - 1);
  }
  const int64_t used = std::min<int64_t>(threads, total);
  job.chunk = std::max<int64_t>(1, total / (used * kChunksPerThread));
  state->pool->run(&job, static_cast<int>(used - 1), &poll);
  return !job.cancel.load(std::memory_order_relaxed);
}

// ---------------------------------------------------------------------------
// Argument conversion (GIL held)
// ---------------------------------------------------------------------------

std::string short_repr(PyObject *obj) {
  PyObject *r = PyObject_Repr(obj);
  if (r == nullptr) {
    PyErr_Clear();
    return "<unrepresentable>";
  }
  Py_ssize_t n = 0;
  const char *s = PyUnicode_AsUTF8AndSize(r, &n);
  std::string out = s ? std::string(s, static_cast<size_t>(n)) : std::string("<unrepresentable>");
  if (!s) PyErr_Clear();
  Py_DECREF(r);
  if (out.size() > 60) out = out.substr(0, 57) + "...";
  return out;
}

std::string describe(PyObject *obj) {
  if (obj == Py_None) return "None";
  if (PyBool_Check(obj) || PyLong_CheckExact(obj) || PyFloat_CheckExact(obj) || PyUnicode_CheckExact(obj) ||
      PyBytes_CheckExact(obj))
    return std::string(Py_TYPE(obj)->tp_name) + " " + short_repr(obj);
  return "an object of type '" + std::string(Py_TYPE(obj)->tp_name) + "'";
}

struct Param {
  int kind;
  std::string name;
};

class Launcher {
 public:
  Launcher(const std::vector<int> &kinds, const std::vector<std::string> &names, std::string backend)
      : backend_(std::move(backend)) {
    if (kinds.size() != names.size())
      throw py::value_error("Launcher: got " + std::to_string(kinds.size()) + " kinds but " +
                            std::to_string(names.size()) + " names");
    params_.reserve(kinds.size());
    for (size_t i = 0; i < kinds.size(); ++i) {
      if (kinds[i] < 0 || kinds[i] >= KIND_COUNT)
        throw py::value_error("Launcher: argument '" + names[i] + "' (#" + std::to_string(i) + "): unknown kind " +
                              std::to_string(kinds[i]));
      params_.push_back(Param{kinds[i], names[i]});
      if (kinds[i] != KIND_SKIP) ++num_runtime_;
    }
  }

  void call(const py::args &call_args) {
    PyObject *tuple = call_args.ptr();
    Prepared a;
    prepare(tuple, &a);
    PyObject *function = PyTuple_GET_ITEM(tuple, 4);
    PyObject *launch_metadata = PyTuple_GET_ITEM(tuple, 6);
    PyObject *enter_hook = PyTuple_GET_ITEM(tuple, 7);
    PyObject *exit_hook = PyTuple_GET_ITEM(tuple, 8);

    uint64_t fn_addr = 0;
    if (a.total > 0) {
      fn_addr = function_address(function);
      if (fn_addr == 0) throw py::value_error("Launcher: the kernel function address is 0");
    }

    call_hook(enter_hook, launch_metadata);
    if (a.total > 0) {
      auto fn = reinterpret_cast<EntryFn>(static_cast<uintptr_t>(fn_addr));
      bool completed;
      {
        py::gil_scoped_release nogil;
        completed = execute(fn, a.ptrs, static_cast<int32_t>(a.gx), static_cast<int32_t>(a.gy),
                            static_cast<int32_t>(a.gz), a.total);
      }
      if (!completed) throw py::error_already_set();  // the signal handler's exception (KeyboardInterrupt)
    }
    call_hook(exit_hook, launch_metadata);
  }

  // The launch contract without the launch: checks and converts a launcher call exactly as __call__ does and
  // returns (gridX, gridY, gridZ, slots), slots holding 8 bytes per runtime argument (the values the kernel would
  // get). Backends that launch by other means (opencl) take their arguments from it, so one contract holds.
  py::tuple pack(const py::args &call_args) {
    Prepared a;
    prepare(call_args.ptr(), &a);
    py::bytes slots(reinterpret_cast<const char *>(a.slots), static_cast<size_t>(num_runtime_) * sizeof(uint64_t));
    return py::make_tuple(a.gx, a.gy, a.gz, slots);
  }

  // Pointer element types: expected[i] is the dtype object a tensor for parameter i is expected to carry (None:
  // unchecked); a tensor whose `dtype` is another object is passed to check(i, arg), which returns None when it
  // is acceptable after all (an equivalent dtype) or the message of the TypeError.
  void set_pointer_contract(const std::vector<py::object> &expected, py::object check) {
    if (expected.size() != params_.size())
      throw py::value_error("Launcher.set_pointer_contract: got " + std::to_string(expected.size()) +
                            " dtypes for " + std::to_string(params_.size()) + " parameters");
    expected_ = expected;
    check_ = std::move(check);
  }

  std::vector<int> kinds() const {
    std::vector<int> out;
    for (const auto &p : params_) out.push_back(p.kind);
    return out;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto &p : params_) out.push_back(p.name);
    return out;
  }
  int num_runtime_args() const { return num_runtime_; }
  const std::string &backend() const { return backend_; }

  std::string repr() const {
    std::string s = "<triton_backend_sdk._native.Launcher (";
    for (size_t i = 0; i < params_.size(); ++i) {
      if (i) s += ", ";
      s += params_[i].name + ": " + kKindNames[params_[i].kind];
    }
    return s + ")>";
  }

 private:
  // A checked launcher call: grid, program count and each runtime argument's value in its own 8-byte slot.
  struct Prepared {
    int64_t gx = 0, gy = 0, gz = 0, total = 0;
    uint64_t inline_slots[kInlineArgs];
    void *inline_ptrs[kInlineArgs];
    std::vector<uint64_t> heap_slots;
    std::vector<void *> heap_ptrs;
    uint64_t *slots = inline_slots;
    void **ptrs = inline_ptrs;
  };

  void prepare(PyObject *tuple, Prepared *a) const {
    const Py_ssize_t n = PyTuple_GET_SIZE(tuple);
    if (n < kFixedCallArgs)
      throw py::type_error(
          "Launcher expects (gridX, gridY, gridZ, stream, function, packed_metadata, launch_metadata, "
          "launch_enter_hook, launch_exit_hook, *args), got " +
          std::to_string(n) + " positional arguments");
    const Py_ssize_t nargs = n - kFixedCallArgs;
    if (nargs != static_cast<Py_ssize_t>(params_.size())) throw py::type_error(count_message(nargs));

    a->gx = grid_dim(PyTuple_GET_ITEM(tuple, 0), "gridX");
    a->gy = grid_dim(PyTuple_GET_ITEM(tuple, 1), "gridY");
    a->gz = grid_dim(PyTuple_GET_ITEM(tuple, 2), "gridZ");
    if (__builtin_mul_overflow(a->gx, a->gy, &a->total) || __builtin_mul_overflow(a->total, a->gz, &a->total))
      throw py::value_error("Launcher: grid " + std::to_string(a->gx) + " x " + std::to_string(a->gy) + " x " +
                            std::to_string(a->gz) + " has more than 2**63 programs");
    if (num_runtime_ > kInlineArgs) {
      a->heap_slots.resize(num_runtime_);
      a->heap_ptrs.resize(num_runtime_);
      a->slots = a->heap_slots.data();
      a->ptrs = a->heap_ptrs.data();
    }
    int r = 0;
    for (size_t i = 0; i < params_.size(); ++i) {
      const int kind = params_[i].kind;
      if (kind == KIND_SKIP) continue;
      a->slots[r] = 0;
      convert(i, PyTuple_GET_ITEM(tuple, kFixedCallArgs + static_cast<Py_ssize_t>(i)), &a->slots[r]);
      a->ptrs[r] = &a->slots[r];
      ++r;
    }
  }

  // The element type of a tensor against the kernel's signature (set_pointer_contract); identity is the fast path.
  void check_pointer_dtype(size_t i, PyObject *obj) const {
    if (expected_.empty() || expected_[i].is_none()) return;
    static PyObject *s_dtype = PyUnicode_InternFromString("dtype");
    PyObject *dtype = PyObject_GetAttr(obj, s_dtype);
    if (dtype == nullptr) {
      PyErr_Clear();
      return;
    }
    const bool same = dtype == expected_[i].ptr();
    Py_DECREF(dtype);
    if (same) return;
    PyObject *msg = PyObject_CallFunction(check_.ptr(), "nO", static_cast<Py_ssize_t>(i), obj);
    if (msg == nullptr) throw py::error_already_set();
    if (msg == Py_None) {
      Py_DECREF(msg);
      return;
    }
    const std::string text = str_of(msg);
    Py_DECREF(msg);
    fail(i, text);
  }

  std::string count_message(Py_ssize_t got) const {
    std::string s = "Launcher: expected " + std::to_string(params_.size()) + " kernel arguments (";
    for (size_t i = 0; i < params_.size(); ++i) {
      if (i) s += ", ";
      s += params_[i].name;
    }
    return s + "), got " + std::to_string(got);
  }

  [[noreturn]] void fail(size_t i, const std::string &what) const {
    throw py::type_error("argument '" + params_[i].name + "' (#" + std::to_string(i) + "): " + what);
  }

  static int64_t grid_dim(PyObject *obj, const char *which) {
    long long v;
    int overflow = 0;
    if (PyLong_Check(obj)) {
      v = PyLong_AsLongLongAndOverflow(obj, &overflow);
    } else {
      PyObject *idx = PyNumber_Index(obj);
      if (idx == nullptr) {
        PyErr_Clear();
        throw py::type_error(std::string("Launcher: ") + which + " must be an integer, got " + describe(obj));
      }
      v = PyLong_AsLongLongAndOverflow(idx, &overflow);
      Py_DECREF(idx);
    }
    if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
    if (overflow < 0 || (overflow == 0 && v < 0))
      throw py::value_error(std::string("Launcher: ") + which + " must be >= 0, got " + short_repr(obj));
    if (overflow > 0 || v > std::numeric_limits<int32_t>::max())
      throw py::value_error(std::string("Launcher: ") + which + " must be < 2**31, got " + short_repr(obj));
    return v;
  }

  static uint64_t function_address(PyObject *obj) {
    PyObject *idx = PyLong_Check(obj) ? (Py_INCREF(obj), obj) : PyNumber_Index(obj);
    if (idx == nullptr) {
      PyErr_Clear();
      throw py::type_error("Launcher: the kernel function must be an integer address, got " + describe(obj));
    }
    const unsigned long long v = PyLong_AsUnsignedLongLong(idx);
    Py_DECREF(idx);
    if (PyErr_Occurred()) {
      PyErr_Clear();
      throw py::value_error("Launcher: the kernel function address is not a valid 64-bit address: " +
                            short_repr(obj));
    }
    return v;
  }

  static void call_hook(PyObject *hook, PyObject *metadata) {
    if (hook == Py_None) return;
    PyObject *ret = PyObject_CallOneArg(hook, metadata);
    if (ret == nullptr) throw py::error_already_set();
    Py_DECREF(ret);
  }

  void convert(size_t i, PyObject *obj, uint64_t *slot) const {
    const int kind = params_[i].kind;
    switch (kind) {
      case KIND_PTR: {
        const uint64_t p = pointer_value(i, obj);
        std::memcpy(slot, &p, sizeof p);
        return;
      }
      case KIND_I1: {
        const int8_t v = static_cast<int8_t>(int_value(i, obj, 0, 1));
        std::memcpy(slot, &v, sizeof v);
        return;
      }
      case KIND_I8: {
        const int8_t v = static_cast<int8_t>(int_value(i, obj, INT8_MIN, INT8_MAX));
        std::memcpy(slot, &v, sizeof v);
        return;
      }
      case KIND_I16: {
        const int16_t v = static_cast<int16_t>(int_value(i, obj, INT16_MIN, INT16_MAX));
        std::memcpy(slot, &v, sizeof v);
        return;
      }
      case KIND_I32: {
        const int32_t v = static_cast<int32_t>(int_value(i, obj, INT32_MIN, INT32_MAX));
        std::memcpy(slot, &v, sizeof v);
        return;
      }
      case KIND_I64: {
        const int64_t v = int_value(i, obj, INT64_MIN, INT64_MAX);
        std::memcpy(slot, &v, sizeof v);
        return;
      }
      case KIND_U8: {
        const uint8_t v = static_cast<uint8_t>(uint_value(i, obj, UINT8_MAX));
        std::memcpy(slot, &v, sizeof v);
        return;
      }
      case KIND_U16: {
        const uint16_t v = static_cast<uint16_t>(uint_value(i, obj, UINT16_MAX));
        std::memcpy(slot, &v, sizeof v);
        return;
      }
      case KIND_U32: {
        const uint32_t v = static_cast<uint32_t>(uint_value(i, obj, UINT32_MAX));
        std::memcpy(slot, &v, sizeof v);
        return;
      }
      case KIND_U64: {
        const uint64_t v = uint_value(i, obj, UINT64_MAX);
        std::memcpy(slot, &v, sizeof v);
        return;
      }
      case KIND_FP16: {
        const uint16_t v = double_to_fp16_bits(float_value(i, obj));
        std::memcpy(slot, &v, sizeof v);
        return;
      }
      case KIND_BF16: {
        const uint16_t v = double_to_bf16_bits(float_value(i, obj));
        std::memcpy(slot, &v, sizeof v);
        return;
      }
      case KIND_FP32: {
        const float v = static_cast<float>(float_value(i, obj));
        std::memcpy(slot, &v, sizeof v);
        return;
      }
      case KIND_FP64: {
        const double v = float_value(i, obj);
        std::memcpy(slot, &v, sizeof v);
        return;
      }
      default:
        fail(i, "internal error: unknown kind " + std::to_string(kind));
    }
  }

  uint64_t pointer_value(size_t i, PyObject *obj) const {
    static PyObject *s_data_ptr = PyUnicode_InternFromString("data_ptr");
    static PyObject *s_is_cpu = PyUnicode_InternFromString("is_cpu");
    static PyObject *s_device = PyUnicode_InternFromString("device");
    static PyObject *s_type = PyUnicode_InternFromString("type");
    static const std::string kExpected = "expected a CPU tensor or an integer address for a pointer, got ";

    if (PyLong_Check(obj)) {
      if (PyBool_Check(obj)) fail(i, kExpected + describe(obj));
      const unsigned long long v = PyLong_AsUnsignedLongLong(obj);
      if (PyErr_Occurred()) {
        PyErr_Clear();
        fail(i, "pointer address " + short_repr(obj) + " is not in [0, 2**64)");
      }
      return v;
    }
    if (obj == Py_None) fail(i, kExpected + "None");

    // Device check: torch's `is_cpu` is the fast path; otherwise `device.type`.
    PyObject *is_cpu = PyObject_GetAttr(obj, s_is_cpu);
    if (is_cpu != nullptr) {
      const int truth = PyObject_IsTrue(is_cpu);
      Py_DECREF(is_cpu);
      if (truth < 0) throw py::error_already_set();
      if (!truth) fail(i, "tensor is on device '" + device_name(obj, s_device) + "'; the " + backend_ +
                              " backend runs on the CPU");
    } else {
      PyErr_Clear();
      PyObject *device = PyObject_GetAttr(obj, s_device);
      if (device != nullptr) {
        PyObject *type = PyObject_GetAttr(device, s_type);
        std::string type_str;
        if (type != nullptr) {
          type_str = str_of(type);
          Py_DECREF(type);
        } else {
          PyErr_Clear();
          type_str = str_of(device);
          type_str = type_str.substr(0, type_str.find(':'));
        }
        const std::string full = str_of(device);
        Py_DECREF(device);
        if (type_str != "cpu")
          fail(i, "tensor is on device '" + full + "'; the " + backend_ + " backend runs on the CPU");
      } else {
        PyErr_Clear();
      }
    }

    check_pointer_dtype(i, obj);
    PyObject *ret = PyObject_CallMethodNoArgs(obj, s_data_ptr);
    if (ret == nullptr) {
      if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        fail(i, kExpected + describe(obj));
      }
      throw py::error_already_set();
    }
    if (!PyLong_Check(ret)) {
      const std::string d = describe(ret);
      Py_DECREF(ret);
      fail(i, "data_ptr() must return an integer, got " + d);
    }
    const unsigned long long v = PyLong_AsUnsignedLongLong(ret);
    Py_DECREF(ret);
    if (PyErr_Occurred()) {
      PyErr_Clear();
      fail(i, "data_ptr() returned an address outside [0, 2**64)");
    }
    return v;
  }

  static std::string str_of(PyObject *obj) {
    PyObject *s = PyObject_Str(obj);
    if (s == nullptr) {
      PyErr_Clear();
      return "?";
    }
    const char *c = PyUnicode_AsUTF8(s);
    std::string out = c ? c : "?";
    if (!c) PyErr_Clear();
    Py_DECREF(s);
    return out;
  }

  static std::string device_name(PyObject *obj, PyObject *s_device) {
    PyObject *device = PyObject_GetAttr(obj, s_device);
    if (device == nullptr) {
      PyErr_Clear();
      return "<not cpu>";
    }
    std::string out = str_of(device);
    Py_DECREF(device);
    return out;
  }

  // Returns a new reference to an int for integer kinds, or fails.
  PyObject *as_index(size_t i, PyObject *obj) const {
    if (PyLong_Check(obj)) {
      Py_INCREF(obj);
      return obj;
    }
    const int kind = params_[i].kind;
    const std::string expected = std::string("expected an integer for ") + kKindNames[kind] + ", got ";
    if (PyFloat_Check(obj) || obj == Py_None) fail(i, expected + describe(obj));
    PyNumberMethods *nb = Py_TYPE(obj)->tp_as_number;
    if (nb == nullptr || nb->nb_index == nullptr) fail(i, expected + describe(obj));
    PyObject *idx = PyNumber_Index(obj);
    if (idx == nullptr) {
      PyErr_Clear();
      fail(i, expected + describe(obj));
    }
    return idx;
  }

  [[noreturn]] void range_fail(size_t i, PyObject *obj, const std::string &lo, const std::string &hi) const {
    fail(i, "value " + short_repr(obj) + " is out of range for " + kKindNames[params_[i].kind] + " [" + lo + ", " +
                hi + "]");
  }

  int64_t int_value(size_t i, PyObject *obj, int64_t lo, int64_t hi) const {
    PyObject *idx = as_index(i, obj);
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(idx, &overflow);
    Py_DECREF(idx);
    if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
    if (overflow != 0 || v < lo || v > hi) range_fail(i, obj, std::to_string(lo), std::to_string(hi));
    return v;
  }

  uint64_t uint_value(size_t i, PyObject *obj, uint64_t hi) const {
    PyObject *idx = as_index(i, obj);
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(idx, &overflow);
    if (v == -1 && PyErr_Occurred()) {
      Py_DECREF(idx);
      throw py::error_already_set();
    }
    uint64_t u;
    if (overflow < 0 || (overflow == 0 && v < 0)) {
      Py_DECREF(idx);
      range_fail(i, obj, "0", std::to_string(hi));
    } else if (overflow == 0) {
      u = static_cast<uint64_t>(v);
    } else {
      u = PyLong_AsUnsignedLongLong(idx);
      if (PyErr_Occurred()) {
        PyErr_Clear();
        Py_DECREF(idx);
        range_fail(i, obj, "0", std::to_string(hi));
      }
    }
    Py_DECREF(idx);
    if (u > hi) range_fail(i, obj, "0", std::to_string(hi));
    return u;
  }

  double float_value(size_t i, PyObject *obj) const {
    if (PyFloat_Check(obj)) return PyFloat_AS_DOUBLE(obj);
    const int kind = params_[i].kind;
    if (PyLong_Check(obj)) {
      const double d = PyLong_AsDouble(obj);
      if (d == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        fail(i, "integer " + short_repr(obj) + " is too large to convert to " + kKindNames[kind]);
      }
      return d;
    }
    PyNumberMethods *nb = Py_TYPE(obj)->tp_as_number;
    if (obj != Py_None && nb != nullptr && (nb->nb_float != nullptr || nb->nb_index != nullptr)) {
      const double d = PyFloat_AsDouble(obj);
      if (d == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        fail(i, std::string("cannot convert ") + describe(obj) + " to " + kKindNames[kind]);
      }
      return d;
    }
    fail(i, std::string("expected a float for ") + kKindNames[kind] + ", got " + describe(obj));
  }

  std::vector<Param> params_;
  std::vector<py::object> expected_;  // per parameter: the tensor dtype its signature names, or None
  py::object check_;
  int num_runtime_ = 0;
  std::string backend_;
};

}  // namespace tbs

PYBIND11_MODULE(_native, m) {
  using namespace tbs;
  m.doc() =
      "Static launcher for CPU kernels of triton_backend_sdk.\n\n"
      "Kernel ABI: void entry(void **args, int32_t gx, int32_t gy, int32_t gz, int64_t start, int64_t end);\n"
      "runs the programs with linear ids in [start, end); args[i] points at the i-th runtime argument's value\n"
      "(constexprs excluded), each in its own 8-byte slot.";

  g_num_threads.store(default_num_threads());
  static std::once_flag atfork_once;
  std::call_once(atfork_once, [] { pthread_atfork(nullptr, nullptr, atfork_child); });

  py::dict kinds;
  for (int k = 0; k < KIND_COUNT; ++k) {
    std::string upper = kKindNames[k];
    for (auto &c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    m.attr(("KIND_" + upper).c_str()) = k;
    kinds[py::str(kKindNames[k])] = k;
  }
  m.attr("kinds") = kinds;
  m.attr("ABI_VERSION") = kAbiVersion;
  m.attr("MAX_INLINE_ARGS") = kInlineArgs;

  py::class_<Launcher>(m, "Launcher",
                       "Launcher(kinds, names, backend='cpu_ref')\n\n"
                       "One entry of `kinds`/`names` per Triton kernel parameter, constexprs included (as "
                       "KIND_SKIP).\nCalled with Triton's launcher convention: (gridX, gridY, gridZ, stream, "
                       "function, packed_metadata,\nlaunch_metadata, launch_enter_hook, launch_exit_hook, *args); "
                       "`function` is the entry's address.")
      .def(py::init<const std::vector<int> &, const std::vector<std::string> &, std::string>(), py::arg("kinds"),
           py::arg("names"), py::arg("backend") = "cpu_ref")
      .def("__call__", &Launcher::call,
           "__call__(gridX, gridY, gridZ, stream, function, packed_metadata, launch_metadata, launch_enter_hook, "
           "launch_exit_hook, *args)\n\nConverts args (TypeError naming the argument on failure), calls "
           "launch_enter_hook(launch_metadata) if set,\nruns the gridX*gridY*gridZ programs with the GIL released, "
           "then calls launch_exit_hook(launch_metadata).")
      .def("pack", &Launcher::pack,
           "pack(gridX, gridY, gridZ, stream, function, packed_metadata, launch_metadata, launch_enter_hook, "
           "launch_exit_hook, *args)\n\nChecks and converts the call as __call__ does (same errors), runs nothing; "
           "returns\n(gridX, gridY, gridZ, slots): 8 bytes per runtime argument, the values the kernel would get.")
      .def("set_pointer_contract", &Launcher::set_pointer_contract, py::arg("expected"), py::arg("check"),
           "set_pointer_contract(expected, check)\n\nexpected[i]: the dtype object a tensor for parameter i must "
           "carry (None: unchecked);\nanother dtype calls check(i, arg) -> None (acceptable) or the TypeError's "
           "message.")
      .def_property_readonly("kinds", &Launcher::kinds)
      .def_property_readonly("names", &Launcher::names)
      .def_property_readonly("num_runtime_args", &Launcher::num_runtime_args)
      .def_property_readonly("backend", &Launcher::backend)
      .def("__repr__", &Launcher::repr);

  m.def(
      "set_num_threads",
      [](int n) {
        if (n < 1) throw py::value_error("set_num_threads: n must be >= 1, got " + std::to_string(n));
        g_num_threads.store(n);
      },
      py::arg("n"), "Sets how many threads (the caller included) run a launch's programs.");
  m.def(
      "get_num_threads", [] { return g_num_threads.load(); },
      "Threads (the caller included) that run a launch; defaults to the CPUs this process may use.");
  m.def(
      "default_num_threads", [] { return default_num_threads(); },
      "The number of CPUs usable by this process (sched_getaffinity).");
  m.def(
      "_fp16_bits", [](double d) { return double_to_fp16_bits(d); }, py::arg("x"),
      "double -> fp16 bits, round to nearest even (the conversion the launcher applies).");
  m.def(
      "_bf16_bits", [](double d) { return double_to_bf16_bits(d); }, py::arg("x"),
      "double -> bf16 bits, round to nearest even (the conversion the launcher applies).");
}
