//===- HostDevice.h - Functions both backends compile ------------*- C++ -*-===//
//
// Code shared by the CPU and CUDA backends that also runs inside CUDA
// kernels (Philox, window geometry, 16-bit float conversions) is marked
// REMAT_HOST_DEVICE: __host__ __device__ under nvcc, nothing for a plain C++
// compiler, so one definition serves both.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_HOSTDEVICE_H
#define REMAT_RUNTIME_HOSTDEVICE_H

#if defined(__CUDACC__)
#define REMAT_HOST_DEVICE __host__ __device__
#else
#define REMAT_HOST_DEVICE
#endif

#endif // REMAT_RUNTIME_HOSTDEVICE_H
