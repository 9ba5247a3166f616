//===- Elementwise.cu - Unary, binary, where, cast, copy, fill ------------===//
//
// The CUDA versions of runtime/cpu/Elementwise.cpp with the same per-element
// formulas. To keep instantiations few, a kernel takes its op as a runtime
// argument (the switch is uniform across a warp) and is instantiated per
// element type only; cast is one kernel per source type switching on the
// destination dtype. Float kernels take F32, F64, F16 and BF16 storage and
// compute in ComputeType<T> (fp32 for the 16-bit types, rounding to nearest
// even on store).
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/cuda/CudaKernels.h"

#include "Common.cuh"
#include "Convert.cuh"
#include "Indexing.cuh"
#include "Pack.cuh"

#include <algorithm>
#include <cstring>

namespace remat::rt::cuda {
using namespace detail;

namespace {

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

// Integer negation wraps on the minimum value (as the CPU's wrapNeg).
template <typename T> __device__ T wrapNeg(T v) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(U(0) - static_cast<U>(v));
}

/// UnaryParams in the compute precision C (converted on the host), so that
/// fp32 kernels do no double math.
template <typename C> struct DeviceUnaryParams {
  C alpha, beta, gamma, lower, upper;
};

template <typename C> DeviceUnaryParams<C> toDevice(const UnaryParams &p) {
  if constexpr (std::is_floating_point_v<C>)
    return {static_cast<C>(p.alpha), static_cast<C>(p.beta),
            static_cast<C>(p.gamma), static_cast<C>(p.lower),
            static_cast<C>(p.upper)};
  else
    return {}; // the integer ops take no parameters
}

template <typename T>
__device__ T unaryOp(UnaryOp op, T v, const DeviceUnaryParams<T> &p) {
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
    case UnaryOp::Neg: return wrapNeg(v);
    case UnaryOp::Abs: return v < 0 ? wrapNeg(v) : v;
    default: return v > 0 ? v : T(0); // Relu (checked on the host)
    }
  } else {
    switch (op) {
    case UnaryOp::Neg: return -v;
    case UnaryOp::Abs: return dAbs(v);
    case UnaryOp::Sqrt: return dSqrt(v);
    case UnaryOp::Exp: return dExp(v);
    case UnaryOp::Log: return dLog(v);
    case UnaryOp::Reciprocal: return T(1) / v;
    case UnaryOp::Erf: return dErf(v);
    case UnaryOp::Tanh: return dTanh(v);
    case UnaryOp::Sigmoid: {
      // Split by sign so exp never overflows.
      if (v >= 0)
        return T(1) / (T(1) + dExp(-v));
      const T e = dExp(v);
      return e / (T(1) + e);
    }
    case UnaryOp::Relu: return v < 0 ? T(0) : v; // NaN propagates
    case UnaryOp::GeluErf:
      return v * T(0.5) * (T(1) + dErf(v * T(0.7071067811865476)));
    case UnaryOp::GeluTanh: {
      const T k = T(0.7978845608028654); // sqrt(2 / pi)
      return v * T(0.5) * (T(1) + dTanh(k * (v + T(0.044715) * v * v * v)));
    }
    // The comparisons are written so that NaN propagates.
    case UnaryOp::LeakyRelu: return v < 0 ? p.alpha * v : v;
    case UnaryOp::Elu: return v < 0 ? p.alpha * dExpm1(v) : v;
    case UnaryOp::Selu:
      return v > 0 ? p.gamma * v : p.gamma * p.alpha * dExpm1(v);
    case UnaryOp::Softplus: // max(x, 0) + log1p(exp(-|x|)): no overflow
      return (v > 0 ? v : T(0)) + dLog1p(dExp(-dAbs(v)));
    case UnaryOp::Softsign: return v / (T(1) + dAbs(v));
    case UnaryOp::HardSigmoid: {
      const T u = p.alpha * v + p.beta;
      return u < 0 ? T(0) : u > 1 ? T(1) : u;
    }
    case UnaryOp::Clip: {
      const T low = v < p.lower ? p.lower : v;
      return low > p.upper ? p.upper : low;
    }
    case UnaryOp::Sin: return dSin(v);
    case UnaryOp::Cos: return dCos(v);
    default: return v; // Not: rejected on the host
    }
  }
}

/// T is the storage type; unaryOp runs on its compute type.
template <typename T>
__global__ void unaryKernel(UnaryOp op, const T *x, T *y, int64_t n,
                            DeviceUnaryParams<ComputeType<T>> params) {
  REMAT_GRID_STRIDE_LOOP(i, n) {
    y[i] = fromCompute<T>(unaryOp(op, toCompute(x[i]), params));
  }
}

/// unaryKernel over 16-byte packs (x and y aligned: Pack.cuh). The op is
/// a template argument for the common ones: a run-time switch inside the
/// unrolled pack loop put every op's code in the loop 8 times for 16-bit
/// types (2.2 TB/s for bf16 ReLU on an H200, against 4.2 for fp32).
template <typename T, UnaryOp... Ops>
__global__ void unaryPackedKernel(UnaryOp op, const T *x, T *y, int64_t n,
                                  DeviceUnaryParams<ComputeType<T>> params) {
  auto run = [&](auto constant) {
    mapPacks(x, y, n, [&](T v) {
      return fromCompute<T>(
          unaryOp(decltype(constant)::value, toCompute(v), params));
    });
  };
  const bool known =
      ((op == Ops ? (run(std::integral_constant<UnaryOp, Ops>{}), true)
                  : false) ||
       ...);
  if (!known)
    mapPacks(x, y, n, [&](T v) {
      return fromCompute<T>(unaryOp(op, toCompute(v), params));
    });
}

__global__ void notKernel(const uint8_t *x, uint8_t *y, int64_t n) {
  REMAT_GRID_STRIDE_LOOP(i, n) { y[i] = x[i] == 0; }
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

template <typename T, typename F> __device__ T wrapping(T a, T b, F f) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(f(static_cast<U>(a), static_cast<U>(b)));
}

/// Add, Sub, Mul, Div, Max, Min on one compute type (integers wrap;
/// integer division truncates toward zero and reports division by zero).
template <typename T> struct ArithmeticOp {
  BinaryOp op;
  DeviceStatus *status;
  __device__ T operator()(T a, T b) const {
    switch (op) {
    case BinaryOp::Add:
      if constexpr (std::is_integral_v<T>)
        return wrapping(a, b, [](auto x, auto y) { return x + y; });
      else
        return a + b;
    case BinaryOp::Sub:
      if constexpr (std::is_integral_v<T>)
        return wrapping(a, b, [](auto x, auto y) { return x - y; });
      else
        return a - b;
    case BinaryOp::Mul:
      if constexpr (std::is_integral_v<T>)
        return wrapping(a, b, [](auto x, auto y) { return x * y; });
      else
        return a * b;
    case BinaryOp::Div:
      if constexpr (std::is_integral_v<T>) {
        if (b == 0) {
          reportError(status, kIntegerDivisionByZero, 0);
          return 0;
        }
        if (b == -1) // min / -1 overflows
          return wrapNeg(a);
      }
      return a / b;
    case BinaryOp::Max:
      if (dIsNan(a) || dIsNan(b))
        return a + b;
      return a < b ? b : a;
    default: // Min
      if (dIsNan(a) || dIsNan(b))
        return a + b;
      return b < a ? b : a;
    }
  }
};

/// Equal, Less, Greater (any arithmetic type or Bool bytes) and And, Or
/// (Bool bytes): Bool results.
template <typename T> struct ComparisonOp {
  BinaryOp op;
  __device__ uint8_t operator()(T a, T b) const {
    switch (op) {
    case BinaryOp::Equal: return a == b;
    case BinaryOp::Less: return a < b;
    case BinaryOp::Greater: return a > b;
    case BinaryOp::And: return a != 0 && b != 0;
    default: return a != 0 || b != 0; // Or
    }
  }
};

/// PRelu: a < 0 ? a * slope : a (floats; NaN propagates).
template <typename T> struct PReluOp {
  __device__ T operator()(T a, T slope) const { return a < 0 ? a * slope : a; }
};

/// Float base (compute type C), float or integer exponent (compute type E,
/// converted to C as the CPU does).
template <typename C, typename E> struct PowOp {
  __device__ C operator()(C a, E b) const {
    return dPow(a, static_cast<C>(b));
  }
};

/// A, B and R are storage types; Op works on their compute types and
/// returns R's.
template <typename A, typename B, typename R, typename Op>
__global__ void binaryKernel(Op op, const A *a, const B *b, R *out, int64_t n,
                             Indexer<2> ix) {
  REMAT_GRID_STRIDE_LOOP(i, n) {
    int64_t off[2];
    ix.offsets(i, off);
    out[i] = fromCompute<R>(op(toCompute(a[off[0]]), toCompute(b[off[1]])));
  }
}

/// binaryKernel for operands and output of one type T and the output's
/// shape, all contiguous, over 16-byte packs (Pack.cuh).
template <typename T, typename Op>
__global__ void binaryPackedKernel(Op op, const T *a, const T *b, T *out,
                                   int64_t n) {
  mapPacks(a, b, out, n, [&](T x, T y) {
    return fromCompute<T>(op(toCompute(x), toCompute(y)));
  });
}

/// binaryPackedKernel with one operand a row of `rowPacks` packs repeated
/// over the rows of the other (a bias add: [rows, C] op [C], C a multiple
/// of the pack): the row's packs stay in cache, the full operand and the
/// output stream. `rowFirst`: the row is op's first operand. Index is
/// uint32_t when every pack index fits, else int64_t.
template <typename T, typename Op, typename Index>
__global__ void binaryRowPackedKernel(Op op, const T *full, const T *row,
                                      T *out, Index packs, Index rowPacks,
                                      bool rowFirst) {
  using P = Pack<T>;
  for (Index i = Index(blockIdx.x) * blockDim.x + threadIdx.x; i < packs;
       i += Index(gridDim.x) * blockDim.x) {
    const P x = reinterpret_cast<const P *>(full)[i];
    const P y = reinterpret_cast<const P *>(row)[i % rowPacks];
    P r;
#pragma unroll
    for (int k = 0; k < P::kSize; ++k) {
      const auto f = toCompute(x.v[k]), w = toCompute(y.v[k]);
      r.v[k] = fromCompute<T>(rowFirst ? op(w, f) : op(f, w));
    }
    reinterpret_cast<P *>(out)[i] = r;
  }
}

template <typename A, typename B, typename R, typename Op>
void launchBinary(const TensorView &a, const TensorView &b,
                  const TensorView &out, Op op) {
  const char *kernel = "binary";
  const int64_t n = out.numel();
  if (n == 0)
    return;
  const Indexer<2> ix =
      makeIndexer<2>(out.shape,
                     {broadcastStrides(a.shape, out.shape, kernel),
                      broadcastStrides(b.shape, out.shape, kernel)},
                     kernel);
  cudaStream_t stream = context(kernel).stream;
  // Operands of the output's own shape (merged into one contiguous dim)
  // and of one type: packs.
  if constexpr (std::is_same_v<A, B> && std::is_same_v<A, R>) {
    if (ix.rank == 1 && ix.strides[0][0] == 1 && ix.strides[1][0] == 1 &&
        packAligned({a.data, b.data, out.data})) {
      binaryPackedKernel<<<packedGrid<A>(n), kThreads, 0, stream>>>(
          op, a.as<const A>(), b.as<const A>(), out.as<A>(), n);
      checkLaunch(kernel);
      return;
    }
    // One operand contiguous, the other one row broadcast over it (strides
    // [0, 1] after merging), rows a whole number of packs.
    const int64_t width = ix.rank == 2 ? ix.shape[1] : 0;
    const bool aIsRow = ix.rank == 2 && ix.strides[0][0] == 0 &&
                        ix.strides[0][1] == 1 && ix.strides[1][0] == width &&
                        ix.strides[1][1] == 1;
    const bool bIsRow = ix.rank == 2 && ix.strides[1][0] == 0 &&
                        ix.strides[1][1] == 1 && ix.strides[0][0] == width &&
                        ix.strides[0][1] == 1;
    if ((aIsRow || bIsRow) && width % Pack<A>::kSize == 0 &&
        packAligned({a.data, b.data, out.data})) {
      const A *full = aIsRow ? b.as<const A>() : a.as<const A>();
      const A *row = aIsRow ? a.as<const A>() : b.as<const A>();
      const int64_t packs = n / Pack<A>::kSize;
      const int64_t rowPacks = width / Pack<A>::kSize;
      if (packs <= INT32_MAX)
        binaryRowPackedKernel<A, Op, uint32_t>
            <<<packedGrid<A>(n), kThreads, 0, stream>>>(
                op, full, row, out.as<A>(), static_cast<uint32_t>(packs),
                static_cast<uint32_t>(rowPacks), aIsRow);
      else
        binaryRowPackedKernel<A, Op, int64_t>
            <<<packedGrid<A>(n), kThreads, 0, stream>>>(
                op, full, row, out.as<A>(), packs, rowPacks, aIsRow);
      checkLaunch(kernel);
      return;
    }
  }
  binaryKernel<<<gridFor(n), kThreads, 0, stream>>>(
      op, a.as<const A>(), b.as<const B>(), out.as<R>(), n, ix);
  checkLaunch(kernel);
}

//===----------------------------------------------------------------------===//
// Where, cast, fill
//===----------------------------------------------------------------------===//

template <typename T>
__global__ void whereKernel(const uint8_t *cond, const T *x, const T *y, T *out,
                            int64_t n, Indexer<3> ix) {
  REMAT_GRID_STRIDE_LOOP(i, n) {
    int64_t off[3];
    ix.offsets(i, off);
    out[i] = cond[off[0]] ? x[off[1]] : y[off[2]];
  }
}

/// S is the source's storage type (Convert.cuh); the destination is chosen
/// per element by `to`, uniformly across the grid.
template <typename S>
__global__ void castKernel(const S *x, void *y, DType to, int64_t n) {
  REMAT_GRID_STRIDE_LOOP(i, n) { storeWide(y, to, i, widen(x[i])); }
}

/// castKernel between two float storage types (F32, F16, BF16) of 16-byte
/// aligned tensors: each thread converts K elements, K = 16 bytes of the
/// narrower type (one 16-byte access on that side, two on the wider); the
/// last n % K elements one per thread of the first block. The conversions
/// are storeWide's for these types.
template <typename S, typename D>
__global__ void castPackedKernel(const S *x, D *y, int64_t n) {
  using PS = Pack<S>;
  using PD = Pack<D>;
  constexpr int K = PS::kSize > PD::kSize ? PS::kSize : PD::kSize;
  constexpr int NS = K / PS::kSize, ND = K / PD::kSize;
  const int64_t groups = n / K;
  REMAT_GRID_STRIDE_LOOP(i, groups) {
    PS in[NS];
#pragma unroll
    for (int j = 0; j < NS; ++j)
      in[j] = reinterpret_cast<const PS *>(x)[i * NS + j];
    PD out[ND];
#pragma unroll
    for (int k = 0; k < K; ++k)
      out[k / PD::kSize].v[k % PD::kSize] =
          fromCompute<D>(toCompute(in[k / PS::kSize].v[k % PS::kSize]));
#pragma unroll
    for (int j = 0; j < ND; ++j)
      reinterpret_cast<PD *>(y)[i * ND + j] = out[j];
  }
  const int64_t tail = groups * K + threadIdx.x;
  if (blockIdx.x == 0 && tail < n)
    y[tail] = fromCompute<D>(toCompute(x[tail]));
}

/// Calls f(Tag<T>{}) for F32, F16 and BF16 storage; returns false for other
/// dtypes.
template <typename Fn> bool dispatchNarrowFloat(DType dtype, Fn &&f) {
  switch (dtype) {
  case DType::F32: f(Tag<float>{}); return true;
  case DType::F16: f(Tag<Half>{}); return true;
  case DType::BF16: f(Tag<BFloat16>{}); return true;
  default: return false;
  }
}

template <typename T> __global__ void fillKernel(T *y, T value, int64_t n) {
  REMAT_GRID_STRIDE_LOOP(i, n) { y[i] = value; }
}

} // namespace

void unary(UnaryOp op, const TensorView &x, const TensorView &y,
           const UnaryParams &params) {
  const char *kernel = "unary";
  requireDType(y, x.dtype, kernel, "output");
  requireNumel(y, x.numel(), kernel, "output");
  const int64_t n = x.numel();
  cudaStream_t stream = context(kernel).stream;
  if (op == UnaryOp::Not) {
    requireDType(x, DType::Bool, kernel, "Not input");
    if (n == 0)
      return;
    notKernel<<<gridFor(n), kThreads, 0, stream>>>(x.as<const uint8_t>(),
                                                   y.as<uint8_t>(), n);
    checkLaunch(kernel);
    return;
  }
  const bool integerOk =
      op == UnaryOp::Neg || op == UnaryOp::Abs || op == UnaryOp::Relu;
  if ((x.dtype == DType::I64 || x.dtype == DType::I32) && !integerOk)
    fail(kernel, "op is not defined on integer dtypes");
  dispatchArithStorage(x.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (n == 0)
      return;
    if (packAligned({x.data, y.data})) {
      unaryPackedKernel<T, UnaryOp::Relu, UnaryOp::GeluTanh, UnaryOp::GeluErf,
                        UnaryOp::Neg, UnaryOp::Exp, UnaryOp::Tanh,
                        UnaryOp::Sigmoid, UnaryOp::Sqrt, UnaryOp::Reciprocal>
          <<<packedGrid<T>(n), kThreads, 0, stream>>>(
              op, x.as<const T>(), y.as<T>(), n,
              toDevice<ComputeType<T>>(params));
    } else {
      unaryKernel<T><<<gridFor(n), kThreads, 0, stream>>>(
          op, x.as<const T>(), y.as<T>(), n, toDevice<ComputeType<T>>(params));
    }
    checkLaunch(kernel);
  });
}

void binary(BinaryOp op, const TensorView &a, const TensorView &b,
            const TensorView &out) {
  const char *kernel = "binary";
  Context &ctx = context(kernel);
  if (op != BinaryOp::Pow)
    requireDType(b, a.dtype, kernel, "second operand");
  switch (op) {
  case BinaryOp::Add:
  case BinaryOp::Sub:
  case BinaryOp::Mul:
  case BinaryOp::Div:
  case BinaryOp::Max:
  case BinaryOp::Min:
    requireDType(out, a.dtype, kernel, "output");
    dispatchArithStorage(a.dtype, kernel, [&](auto tag) {
      using T = typename decltype(tag)::type;
      launchBinary<T, T, T>(a, b, out,
                            ArithmeticOp<ComputeType<T>>{op, ctx.status});
    });
    return;
  case BinaryOp::Pow:
    requireDType(out, a.dtype, kernel, "output");
    dispatchFloatStorage(a.dtype, "binary(Pow)", [&](auto baseTag) {
      using T = typename decltype(baseTag)::type;
      dispatchArithStorage(b.dtype, "binary(Pow) exponent", [&](auto expTag) {
        using E = typename decltype(expTag)::type;
        launchBinary<T, E, T>(a, b, out,
                              PowOp<ComputeType<T>, ComputeType<E>>{});
      });
    });
    return;
  case BinaryOp::PRelu:
    requireDType(out, a.dtype, kernel, "output");
    dispatchFloatStorage(a.dtype, "binary(PRelu)", [&](auto tag) {
      using T = typename decltype(tag)::type;
      launchBinary<T, T, T>(a, b, out, PReluOp<ComputeType<T>>{});
    });
    return;
  case BinaryOp::Equal:
  case BinaryOp::Less:
  case BinaryOp::Greater:
    requireDType(out, DType::Bool, kernel, "output");
    if (a.dtype == DType::Bool) {
      launchBinary<uint8_t, uint8_t, uint8_t>(a, b, out,
                                              ComparisonOp<uint8_t>{op});
      return;
    }
    dispatchArithStorage(a.dtype, kernel, [&](auto tag) {
      using T = typename decltype(tag)::type;
      launchBinary<T, T, uint8_t>(a, b, out, ComparisonOp<ComputeType<T>>{op});
    });
    return;
  case BinaryOp::And:
  case BinaryOp::Or:
    requireDType(a, DType::Bool, kernel, "logical operand");
    requireDType(out, DType::Bool, kernel, "output");
    launchBinary<uint8_t, uint8_t, uint8_t>(a, b, out,
                                            ComparisonOp<uint8_t>{op});
    return;
  }
  fail(kernel, "unknown op");
}

void where(const TensorView &cond, const TensorView &x, const TensorView &y,
           const TensorView &out) {
  const char *kernel = "where";
  requireDType(cond, DType::Bool, kernel, "condition");
  requireDType(x, out.dtype, kernel, "x");
  requireDType(y, out.dtype, kernel, "y");
  const int64_t n = out.numel();
  const Indexer<3> ix =
      makeIndexer<3>(out.shape,
                     {broadcastStrides(cond.shape, out.shape, kernel),
                      broadcastStrides(x.shape, out.shape, kernel),
                      broadcastStrides(y.shape, out.shape, kernel)},
                     kernel);
  cudaStream_t stream = context(kernel).stream;
  dispatchBySize(out.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (n == 0)
      return;
    whereKernel<T><<<gridFor(n), kThreads, 0, stream>>>(
        cond.as<const uint8_t>(), x.as<const T>(), y.as<const T>(), out.as<T>(),
        n, ix);
    checkLaunch(kernel);
  });
}

void cast(const TensorView &x, const TensorView &y) {
  const char *kernel = "cast";
  requireNumel(y, x.numel(), kernel, "output");
  if (x.dtype == y.dtype)
    return cuda::copy(x, y);
  const int64_t n = x.numel();
  cudaStream_t stream = context(kernel).stream;
  if (n == 0)
    return;
  // Between the float types of training (mixed precision's casts): packs.
  bool launched = false;
  if (packAligned({x.data, y.data}))
    dispatchNarrowFloat(x.dtype, [&](auto from) {
      using S = typename decltype(from)::type;
      dispatchNarrowFloat(y.dtype, [&](auto to) {
        using D = typename decltype(to)::type;
        if constexpr (!std::is_same_v<S, D>) {
          constexpr int64_t K = std::max(Pack<S>::kSize, Pack<D>::kSize);
          castPackedKernel<S, D>
              <<<gridFor(std::max<int64_t>(n / K, 1)), kThreads, 0, stream>>>(
                  x.as<const S>(), y.as<D>(), n);
          checkLaunch(kernel);
          launched = true;
        }
      });
    });
  if (launched)
    return;
  dispatchCastSource(x.dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    castKernel<S><<<gridFor(n), kThreads, 0, stream>>>(x.as<const S>(), y.data,
                                                       y.dtype, n);
    checkLaunch(kernel);
  });
}

void copy(const TensorView &x, const TensorView &y) {
  const char *kernel = "copy";
  requireDType(y, x.dtype, kernel, "output");
  requireNumel(y, x.numel(), kernel, "output");
  cudaStream_t stream = context(kernel).stream;
  if (x.data != y.data && x.bytes() != 0)
    checkCuda(cudaMemcpyAsync(y.data, x.data, x.bytes(),
                              cudaMemcpyDeviceToDevice, stream),
              kernel, "cudaMemcpyAsync");
}

void fill(const TensorView &y, double value) {
  const char *kernel = "fill";
  cudaStream_t stream = context(kernel).stream;
  // The element's bytes, converted on the host with the CPU's rules:
  // integers through int64 (saturating), the rest as cast narrows a double.
  uint64_t bits = 0;
  const size_t size = dtypeSize(y.dtype);
  switch (y.dtype) {
  case DType::I64:
  case DType::I32:
  case DType::I8:
  case DType::U8: {
    const Wide<double> wide{
        false, 0,
        saturatingTruncate<int64_t>(
            value, static_cast<int64_t>(-0x7fffffffffffffffll - 1),
            static_cast<int64_t>(0x7fffffffffffffffll))};
    storeWide(&bits, y.dtype, 0, wide);
    break;
  }
  default: storeWide(&bits, y.dtype, 0, Wide<double>{true, value, 0}); break;
  }
  const int64_t n = y.numel();
  if (n == 0)
    return;
  if (bits == 0) {
    zeroAsync(y.data, y.bytes(), kernel);
    return;
  }
  dispatchBySize(y.dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T element;
    std::memcpy(&element, &bits, size);
    fillKernel<T><<<gridFor(n), kThreads, 0, stream>>>(y.as<T>(), element, n);
    checkLaunch(kernel);
  });
}

} // namespace remat::rt::cuda
