// Origin: salesforce/warp-drive example_envs/dummy_env/test_step.cu (+ warp_drive/cuda_includes/core/env_dim_mapper.h, core/env_thread_sync.h/.cu) @ bac017ebb481714bee8f6b0ec75a67d3a2e034d3
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

// ===== warp_drive/cuda_includes/core/env_thread_sync.h =====
#ifndef CUDA_INCLUDES_ENV_SYNC_H_
#define CUDA_INCLUDES_ENV_SYNC_H_

const int wkMaxBlocks = wkNumberEnvs * wkBlocksPerEnv;
__device__ unsigned char env_sync_block_indicator[wkMaxBlocks];

__device__ int getRankInEnv(const int blockIdx){
    return blockIdx % wkBlocksPerEnv;
}

__device__ void __sync_env_threads();

#endif // CUDA_INCLUDES_ENV_SYNC_H_

// ===== warp_drive/cuda_includes/core/env_thread_sync.cu =====
// [corpus2: include dropped, inlined above] #include "env_thread_sync.h"


__device__ unsigned char load_arrived(unsigned char *arrived) {
#if __CUDA_ARCH__ < 700
    return *(volatile unsigned char *)arrived;
#else
    unsigned int result;
    asm volatile("ld.acquire.gpu.global.u8 %0, [%1];"
                 : "=r"(result)
                 : "l"(arrived)
                 : "memory");
    return result;
#endif
  }

__device__ void store_arrived(unsigned char *arrived, unsigned char val) {
#if __CUDA_ARCH__ < 700
    *(volatile unsigned char *)arrived = val;
#else
    unsigned int reg_val = val;
    asm volatile(
        "st.release.gpu.global.u8 [%1], %0;" ::"r"(reg_val) "l"(arrived)
        : "memory");

    // Avoids compiler warnings from unused variable val.
    (void)(reg_val = reg_val);
#endif
  }

__device__ void __sync_env_threads(){
    __syncthreads();

    if(wkBlocksPerEnv <= 1) return;

    const int kThisEnvId = getEnvID(blockIdx.x);
    const int blockInEnv = getRankInEnv(blockIdx.x);
    unsigned char* const local_indicator = env_sync_block_indicator + kThisEnvId * wkBlocksPerEnv;

    if(threadIdx.x == 0){
        if(blockInEnv == 0){
            // Leader block waits for others to join and then releases them.
            // Other blocks in env can arrive in any order, so the leader have to wait for
            // all others.
            for (int i = 0; i < wkBlocksPerEnv - 1; i++) {
                while (load_arrived(&local_indicator[i]) == 0)
                    ;
            }
            for (int i = 0; i < wkBlocksPerEnv - 1; i++) {
                store_arrived(&local_indicator[i], 0);
            }
            __threadfence();
        }else{
            // Other blocks in env note their arrival and wait to be released.
            store_arrived(&local_indicator[blockInEnv - 1], 1);
            while (load_arrived(&local_indicator[blockInEnv - 1]) == 1)
                ;
        }
    }

    __syncthreads();
}

// ===== example_envs/dummy_env/test_step.cu =====
// Copyright (c) 2021, salesforce.com, inc.
// All rights reserved.
// SPDX-License-Identifier: BSD-3-Clause
// For full license text, see the LICENSE file in the repo root
// or https://opensource.org/licenses/BSD-3-Clause

extern "C"{
// test data transfer between CPU and GPU, and the updates in place
  __global__ void testkernel(float* x, int* y, int* done, int* actions, float multiplier, int target, int step, int episode_length)
  {
    __shared__ int reach_target;
    int env_id = getEnvID(blockIdx.x);
    int agent_id = getAgentID(threadIdx.x, blockIdx.x, blockDim.x);
    // this serves as the leading agent for each block since we have shared memory residing in each block
    int tid = threadIdx.x;
    int action_dim = 3;

    if(tid==0){
      reach_target = 0;
    }

    if(agent_id < wkNumberAgents){
        int index = env_id * wkNumberAgents + agent_id;
        int action_index = index * action_dim;

        x[index] = x[index] / multiplier;
        y[index] = y[index] * multiplier;

        if(y[index] >= target){
          atomicAdd(&reach_target, 1);
        }

        for(int i=0; i<action_dim; i++){
          actions[action_index + i] = i;
        }

        __sync_env_threads();

        if(step == episode_length || reach_target > 0){
          if(tid == 0){
            atomicMax(&done[env_id], 1);
          }
        }
    }
  }
}
