// Origin: salesforce/warp-drive warp_drive/cuda_includes/core/log.cu (+ core/log.h, core/env_dim_mapper.h) @ bac017ebb481714bee8f6b0ec75a67d3a2e034d3
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

// ===== warp_drive/cuda_includes/core/log.h =====
// Copyright (c) 2021, salesforce.com, inc.
// All rights reserved.
// SPDX-License-Identifier: BSD-3-Clause
// For full license text, see the LICENSE file in the repo root
// or https://opensource.org/licenses/BSD-3-Clause

#ifndef CUDA_INCLUDES_LOG_H_
#define CUDA_INCLUDES_LOG_H_

extern "C" __global__ void reset_log_mask(int* log_mask,
int episode_length);

extern "C" __global__ void update_log_mask(int* log_mask, int timestep,
int episode_length);

extern "C" __global__ void log_one_step_in_float(float* log, float* data,
int feature_dim, int timestep, int episode_length, int env_id = 0);

extern "C" __global__ void log_one_step_in_int(int* log, int* data,
int feature_dim, int timestep, int episode_length, int env_id = 0);

#endif  // CUDA_INCLUDES_LOG_H_

// ===== warp_drive/cuda_includes/core/log.cu =====
// Copyright (c) 2021, salesforce.com, inc.
// All rights reserved.
// SPDX-License-Identifier: BSD-3-Clause
// For full license text, see the LICENSE file in the repo root
// or https://opensource.org/licenses/BSD-3-Clause

// [corpus2: include dropped, inlined above] #include "log.h"

// we have size of episode_length + 1 timesteps for logging,
// the 0th timestep is reserved for reset to place the data at reset
__global__ void reset_log_mask(int* log_mask, int episode_length) {
  int tidx = getAgentID(threadIdx.x, blockIdx.x, blockDim.x);
  if (tidx == 0) {
    for (int i = 0; i<= episode_length; i++) {
      log_mask[i] = 0;
    }
  }
}

__global__ void update_log_mask(int* log_mask, int timestep,
  int episode_length) {
  int tidx = getAgentID(threadIdx.x, blockIdx.x, blockDim.x);
  if (tidx == 0 && timestep <= episode_length) {
      if (timestep >= 1) {
        assert(log_mask[timestep-1] == 1);
      }
      log_mask[timestep] = 1;
  }
}

template <class T>
__device__ void log_one_step_helper(T* log, T* data, int feature_dim,
int timestep, int agent_id, int env_id) {
  int time_dependent_log_index = timestep * wkNumberAgents * feature_dim +
    agent_id * feature_dim;
  int data_index = env_id * wkNumberAgents * feature_dim + agent_id * feature_dim;

  for (int i = 0; i < feature_dim; i++) {
    log[time_dependent_log_index + i] = data[data_index + i];
  }
}

__global__ void log_one_step_in_float(float* log, float* data, int feature_dim,
int timestep, int episode_length, int env_id) {
  int agent_id = threadIdx.x + blockIdx.x * blockDim.x;;
  // only run threads in the first block
  if (agent_id >= wkNumberAgents) return;
  if (timestep > episode_length) return;

  log_one_step_helper(log, data, feature_dim, timestep, agent_id, env_id);
}

__global__ void log_one_step_in_int(int* log, int* data, int feature_dim,
int timestep, int episode_length, int env_id) {
  int agent_id = threadIdx.x + blockIdx.x * blockDim.x;

  // only run threads in the first block
  if (agent_id >= wkNumberAgents) return;
  if (timestep > episode_length) return;

  log_one_step_helper(log, data, feature_dim, timestep, agent_id, env_id);
}
