// Origin: salesforce/warp-drive warp_drive/cuda_includes/core/reset.cu (+ core/reset.h, core/env_dim_mapper.h) @ bac017ebb481714bee8f6b0ec75a67d3a2e034d3
// License: BSD-3-Clause (Copyright (c) 2021, salesforce.com, inc.)
// Commit: bac017ebb481714bee8f6b0ec75a67d3a2e034d3
// Modified: the env_config.h that warp_drive generates from template_env_config.h is written out (wkNumberEnvs = 64, wkNumberAgents = 5, wkBlocksPerEnv = 1) and the project headers the file includes are inlined in front of it (their #include "..." lines commented out); code verbatim.

// ===== env_config.h (written by the user / by warp_drive's function_manager from template_env_config.h) =====
#include <assert.h>
const int wkNumberEnvs = 64;
const int wkNumberAgents = 5;
const int wkBlocksPerEnv = 1;

// ===== warp_drive/cuda_includes/core/env_dim_mapper.h =====
#ifndef CUDA_INCLUDES_ENV_DIM_MAPPER_H_
#define CUDA_INCLUDES_ENV_DIM_MAPPER_H_

// the original CUDA has threadIdx relevant to the block, and blockIdx relevant to the grid
// helper function to map thread_id to the local agent_id from gpu block index
/*
For an agent, we need both `kThisAgentId` and `kEnvId` together to decide who it is

- wkBlocksPerEnv = 1, meaning each env covers 1 block, this is the default setting and ideal for most scenarios
  in this case, kThisAgentId and kEnvId has the direct correspondence to threadIdx and blockIdx, respectively

- wkBlocksPerEnv > 1, meaning each env covers more than one blocks
for example:
wkBlocksPerEnv = 3, meaning each env covers 3 blocks
blockDim = 10, meaning each block owns 10 threads
then: blockIdx = 2, threadIdx = 6 ==> kThisAgentId = 6 + (2 % 3) * 10 = 26, kEnvId = 2 / 3 = 0
      blockIdx = 5, threadIdx = 6 ==> kThisAgentId = 6 + (5 % 3) * 10 = 26, kEnvId = 5 / 3 = 1
      blockIdx = 5, threadIdx = 3 ==> kThisAgentId = 3 + (5 % 3) * 10 = 23, kEnvId = 5 / 3 = 1
      blockIdx = 4, threadIdx = 9 ==> kThisAgentId = 9 + (4 % 3) * 10 = 19, kEnvId = 4 / 3 = 1
      blockIdx = 3, threadIdx = 7 ==> kThisAgentId = 7 + (3 % 3) * 10 = 7, kEnvId = 3 / 3 = 1
*/
__device__ int getAgentID(const int threadIdx, const int blockIdx, const int blockDim){
    int kThisAgentId = (wkBlocksPerEnv > 1) ? threadIdx + (blockIdx % wkBlocksPerEnv) * blockDim : threadIdx;
    return kThisAgentId;
}


__device__ int getEnvID(const int blockIdx){
    int kEnvId = blockIdx / wkBlocksPerEnv;
    return kEnvId;
}

#endif // CUDA_INCLUDES_ENV_DIM_MAPPER_H_

// ===== warp_drive/cuda_includes/core/reset.h =====
// Copyright (c) 2021, salesforce.com, inc.
// All rights reserved.
// SPDX-License-Identifier: BSD-3-Clause
// For full license text, see the LICENSE file in the repo root
// or https://opensource.org/licenses/BSD-3-Clause

#ifndef CUDA_INCLUDES_RESET_H_
#define CUDA_INCLUDES_RESET_H_

extern "C" __global__ void reset_in_float_when_done_2d(float* data,
    const float* ref, int* done, int feature_dim, int force_reset = 0);

extern "C" __global__ void reset_in_int_when_done_2d(int* data,
    const int* ref, int* done, int feature_dim, int force_reset = 0);

extern "C" __global__ void reset_in_float_when_done_3d(float* data,
    const float* ref, int* done, int agent_dim, int feature_dim,
    int force_reset = 0);

extern "C" __global__ void reset_in_int_when_done_3d(int* data,
    const int* ref, int* done, int agent_dim, int feature_dim,
    int force_reset = 0);

extern "C" __global__ void undo_done_flag_and_reset_timestep(
    int* done, int* timestep, int force_reset = 0);

#endif  // CUDA_INCLUDES_RESET_H_

// ===== warp_drive/cuda_includes/core/reset.cu =====
// Copyright (c) 2021, salesforce.com, inc.
// All rights reserved.
// SPDX-License-Identifier: BSD-3-Clause
// For full license text, see the LICENSE file in the repo root
// or https://opensource.org/licenses/BSD-3-Clause

// [corpus2: include dropped, inlined above] #include "reset.h"

__global__ void reset_in_float_when_done_2d(float* data, const float* ref,
  int* done, int feature_dim, int force_reset) {
  int env_id = getEnvID(blockIdx.x);
  int tid = getAgentID(threadIdx.x, blockIdx.x, blockDim.x);
  if (force_reset > 0.5 || done[env_id] > 0.5) {
    if (tid < feature_dim) {
      int data_index = env_id * feature_dim + tid;
      data[data_index] = ref[data_index];
    }
  }
}

__global__ void reset_in_int_when_done_2d(int* data, const int* ref,
int* done, int feature_dim, int force_reset) {
  int env_id = getEnvID(blockIdx.x);
  int tid = getAgentID(threadIdx.x, blockIdx.x, blockDim.x);
  if (force_reset > 0.5 || done[env_id] > 0.5) {
    if (tid < feature_dim) {
      int data_index = env_id * feature_dim + tid;
      data[data_index] = ref[data_index];
    }
  }
}

template <class T>
__device__ void reset_helper_3d(T* data, const T* ref, int feature_dim,
int data_index) {
  for (int i = 0; i < feature_dim; i++) {
    data[data_index + i] = ref[data_index + i];
  }
}

__global__ void reset_in_float_when_done_3d(float* data, const float* ref,
int* done, int agent_dim, int feature_dim, int force_reset) {
  int env_id = getEnvID(blockIdx.x);
  int tid = getAgentID(threadIdx.x, blockIdx.x, blockDim.x);
  if (force_reset > 0.5 || done[env_id] > 0.5) {
    if (tid < agent_dim) {
      int data_index = env_id * agent_dim * feature_dim + tid * feature_dim;
      reset_helper_3d(data, ref, feature_dim, data_index);
    }
  }
}

__global__ void reset_in_int_when_done_3d(int* data, const int* ref,
int* done, int agent_dim, int feature_dim, int force_reset) {
  int env_id = getEnvID(blockIdx.x);
  int tid = getAgentID(threadIdx.x, blockIdx.x, blockDim.x);
  if (force_reset > 0.5 || done[env_id] > 0.5) {
    if (tid < agent_dim) {
      int data_index = env_id * agent_dim * feature_dim + tid * feature_dim;
      reset_helper_3d(data, ref, feature_dim, data_index);
    }
  }
}

__global__ void undo_done_flag_and_reset_timestep(int* done, int* timestep,
int force_reset) {
  int agent_id = getAgentID(threadIdx.x, blockIdx.x, blockDim.x);
  int env_id = getEnvID(blockIdx.x);
  if (force_reset > 0.5 || done[env_id] > 0.5) {
    if (agent_id == 0) {
      done[env_id] = 0;
      timestep[env_id] = 0;
    }
  }
}
