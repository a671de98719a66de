/* SPDX-License-Identifier: Apache-2.0 */
/* Prints, from C, the size of every handle and struct of the public
 * headers, the offset and size of every field, the value of every constant
 * and of the version macros. t/fortran_layout_f prints the same table from
 * the Fortran module; t/fortran-layout.sh compares the two and checks that
 * the table covers every struct field and constant of the headers. */
#include <bk/bk.h>

#include <stddef.h>
#include <stdio.h>

#define HANDLE(T) printf("size %s %zu\n", #T, sizeof(T))
#define STRUCT(T) printf("size %s %zu\n", #T, sizeof(T))
#define FIELD(T, f) \
    printf("field %s.%s %zu %zu\n", #T, #f, offsetof(T, f), sizeof(((T *)0)->f))
#define CONST(c) printf("const %s %lld\n", #c, (long long)(c))

int main(void)
{
    HANDLE(BkContext);
    HANDLE(BkQueue);
    HANDLE(BkCommandBuffer);
    HANDLE(BkPlan);
    HANDLE(BkMemory);

    STRUCT(BkBaseInStructure);
    FIELD(BkBaseInStructure, sType);
    FIELD(BkBaseInStructure, pNext);

    STRUCT(BkBaseOutStructure);
    FIELD(BkBaseOutStructure, sType);
    FIELD(BkBaseOutStructure, pNext);

    STRUCT(BkTensorDesc);
    FIELD(BkTensorDesc, dataType);
    FIELD(BkTensorDesc, rank);
    FIELD(BkTensorDesc, extent);
    FIELD(BkTensorDesc, stride);

    STRUCT(BkAllocationCallbacks);
    FIELD(BkAllocationCallbacks, pUserData);
    FIELD(BkAllocationCallbacks, pfnAllocation);
    FIELD(BkAllocationCallbacks, pfnFree);

    STRUCT(BkDeviceProperties);
    FIELD(BkDeviceProperties, sType);
    FIELD(BkDeviceProperties, pNext);
    FIELD(BkDeviceProperties, deviceType);
    FIELD(BkDeviceProperties, deviceIndex);
    FIELD(BkDeviceProperties, name);
    FIELD(BkDeviceProperties, computeCapabilityMajor);
    FIELD(BkDeviceProperties, computeCapabilityMinor);
    FIELD(BkDeviceProperties, multiprocessorCount);
    FIELD(BkDeviceProperties, queueCount);
    FIELD(BkDeviceProperties, totalMemory);
    FIELD(BkDeviceProperties, driverVersion);
    FIELD(BkDeviceProperties, runtimeVersion);

    STRUCT(BkDeviceModuleProperties);
    FIELD(BkDeviceModuleProperties, sType);
    FIELD(BkDeviceModuleProperties, pNext);
    FIELD(BkDeviceModuleProperties, binaryArchitectureCount);
    FIELD(BkDeviceModuleProperties, binaryArchitectures);
    FIELD(BkDeviceModuleProperties, ptxArchitectureCount);
    FIELD(BkDeviceModuleProperties, ptxArchitectures);
    FIELD(BkDeviceModuleProperties, deviceSupported);

    STRUCT(BkContextCreateInfo);
    FIELD(BkContextCreateInfo, sType);
    FIELD(BkContextCreateInfo, pNext);
    FIELD(BkContextCreateInfo, deviceType);
    FIELD(BkContextCreateInfo, deviceIndex);
    FIELD(BkContextCreateInfo, apiVersion);
    FIELD(BkContextCreateInfo, flags);

    STRUCT(BkMemoryAllocateInfo);
    FIELD(BkMemoryAllocateInfo, sType);
    FIELD(BkMemoryAllocateInfo, pNext);
    FIELD(BkMemoryAllocateInfo, size);
    FIELD(BkMemoryAllocateInfo, memoryType);

    STRUCT(BkCommandBufferBeginInfo);
    FIELD(BkCommandBufferBeginInfo, sType);
    FIELD(BkCommandBufferBeginInfo, pNext);
    FIELD(BkCommandBufferBeginInfo, usage);

    STRUCT(BkPlanCreateInfo);
    FIELD(BkPlanCreateInfo, sType);
    FIELD(BkPlanCreateInfo, pNext);
    FIELD(BkPlanCreateInfo, pOperation);
    FIELD(BkPlanCreateInfo, flags);

    STRUCT(BkPrecisionGuarantee);
    FIELD(BkPrecisionGuarantee, computeType);
    FIELD(BkPrecisionGuarantee, accumulatorType);
    FIELD(BkPrecisionGuarantee, deterministic);
    FIELD(BkPrecisionGuarantee, bitStable);

    STRUCT(BkPlanProperties);
    FIELD(BkPlanProperties, sType);
    FIELD(BkPlanProperties, pNext);
    FIELD(BkPlanProperties, operation);
    FIELD(BkPlanProperties, backend);
    FIELD(BkPlanProperties, bindingCount);
    FIELD(BkPlanProperties, workspaceSize);
    FIELD(BkPlanProperties, workspaceAlignment);
    FIELD(BkPlanProperties, kernelName);
    FIELD(BkPlanProperties, precision);

    STRUCT(BkBindingProperties);
    FIELD(BkBindingProperties, name);
    FIELD(BkBindingProperties, size);
    FIELD(BkBindingProperties, alignment);
    FIELD(BkBindingProperties, written);
    FIELD(BkBindingProperties, reserved);

    STRUCT(BkPlanBindingProperties);
    FIELD(BkPlanBindingProperties, sType);
    FIELD(BkPlanBindingProperties, pNext);
    FIELD(BkPlanBindingProperties, bindingCount);
    FIELD(BkPlanBindingProperties, reserved);
    FIELD(BkPlanBindingProperties, bindings);

    STRUCT(BkRunInfo);
    FIELD(BkRunInfo, sType);
    FIELD(BkRunInfo, pNext);
    FIELD(BkRunInfo, bindingCount);
    FIELD(BkRunInfo, pBindings);
    FIELD(BkRunInfo, pBindingSizes);
    FIELD(BkRunInfo, workspace);
    FIELD(BkRunInfo, workspaceSize);

    STRUCT(BkGatedActivationInfo);
    FIELD(BkGatedActivationInfo, sType);
    FIELD(BkGatedActivationInfo, pNext);
    FIELD(BkGatedActivationInfo, kind);
    FIELD(BkGatedActivationInfo, splitAxis);
    FIELD(BkGatedActivationInfo, input);
    FIELD(BkGatedActivationInfo, output);

    STRUCT(BkGatedActivationBackwardInfo);
    FIELD(BkGatedActivationBackwardInfo, sType);
    FIELD(BkGatedActivationBackwardInfo, pNext);
    FIELD(BkGatedActivationBackwardInfo, kind);
    FIELD(BkGatedActivationBackwardInfo, splitAxis);
    FIELD(BkGatedActivationBackwardInfo, input);
    FIELD(BkGatedActivationBackwardInfo, gradOutput);
    FIELD(BkGatedActivationBackwardInfo, gradInput);

    STRUCT(BkGemmInfo);
    FIELD(BkGemmInfo, sType);
    FIELD(BkGemmInfo, pNext);
    FIELD(BkGemmInfo, transA);
    FIELD(BkGemmInfo, transB);
    FIELD(BkGemmInfo, activation);
    FIELD(BkGemmInfo, flags);
    FIELD(BkGemmInfo, alpha);
    FIELD(BkGemmInfo, beta);
    FIELD(BkGemmInfo, a);
    FIELD(BkGemmInfo, b);
    FIELD(BkGemmInfo, c);
    FIELD(BkGemmInfo, d);
    FIELD(BkGemmInfo, bias);

    STRUCT(BkSparse24Report);
    FIELD(BkSparse24Report, status);
    FIELD(BkSparse24Report, reserved);
    FIELD(BkSparse24Report, badGroupCount);
    FIELD(BkSparse24Report, firstBadRow);
    FIELD(BkSparse24Report, firstBadGroup);

    STRUCT(BkSparse24ConvertInfo);
    FIELD(BkSparse24ConvertInfo, sType);
    FIELD(BkSparse24ConvertInfo, pNext);
    FIELD(BkSparse24ConvertInfo, conversion);
    FIELD(BkSparse24ConvertInfo, reserved);
    FIELD(BkSparse24ConvertInfo, dense);
    FIELD(BkSparse24ConvertInfo, values);
    FIELD(BkSparse24ConvertInfo, metadata);

    STRUCT(BkSparse24PrepareInfo);
    FIELD(BkSparse24PrepareInfo, sType);
    FIELD(BkSparse24PrepareInfo, pNext);
    FIELD(BkSparse24PrepareInfo, values);
    FIELD(BkSparse24PrepareInfo, metadata);

    STRUCT(BkSparse24GemmInfo);
    FIELD(BkSparse24GemmInfo, sType);
    FIELD(BkSparse24GemmInfo, pNext);
    FIELD(BkSparse24GemmInfo, weightType);
    FIELD(BkSparse24GemmInfo, activation);
    FIELD(BkSparse24GemmInfo, m);
    FIELD(BkSparse24GemmInfo, k);
    FIELD(BkSparse24GemmInfo, alpha);
    FIELD(BkSparse24GemmInfo, beta);
    FIELD(BkSparse24GemmInfo, x);
    FIELD(BkSparse24GemmInfo, c);
    FIELD(BkSparse24GemmInfo, y);
    FIELD(BkSparse24GemmInfo, bias);

    STRUCT(BkW4A16ConvertInfo);
    FIELD(BkW4A16ConvertInfo, sType);
    FIELD(BkW4A16ConvertInfo, pNext);
    FIELD(BkW4A16ConvertInfo, conversion);
    FIELD(BkW4A16ConvertInfo, groupSize);
    FIELD(BkW4A16ConvertInfo, weight);
    FIELD(BkW4A16ConvertInfo, quantized);
    FIELD(BkW4A16ConvertInfo, scales);
    FIELD(BkW4A16ConvertInfo, packed);
    FIELD(BkW4A16ConvertInfo, packedScales);

    STRUCT(BkW4A16RepackReport);
    FIELD(BkW4A16RepackReport, status);
    FIELD(BkW4A16RepackReport, identityPermutation);
    FIELD(BkW4A16RepackReport, badCount);
    FIELD(BkW4A16RepackReport, firstBadRow);
    FIELD(BkW4A16RepackReport, firstBadColumn);

    STRUCT(BkW4A16GptqRepackInfo);
    FIELD(BkW4A16GptqRepackInfo, sType);
    FIELD(BkW4A16GptqRepackInfo, pNext);
    FIELD(BkW4A16GptqRepackInfo, zeros);
    FIELD(BkW4A16GptqRepackInfo, groupSize);
    FIELD(BkW4A16GptqRepackInfo, qweight);
    FIELD(BkW4A16GptqRepackInfo, scales);
    FIELD(BkW4A16GptqRepackInfo, qzeros);
    FIELD(BkW4A16GptqRepackInfo, gIdx);
    FIELD(BkW4A16GptqRepackInfo, packed);
    FIELD(BkW4A16GptqRepackInfo, packedScales);
    FIELD(BkW4A16GptqRepackInfo, perm);

    STRUCT(BkW4A16GemmInfo);
    FIELD(BkW4A16GemmInfo, sType);
    FIELD(BkW4A16GemmInfo, pNext);
    FIELD(BkW4A16GemmInfo, flags);
    FIELD(BkW4A16GemmInfo, groupSize);
    FIELD(BkW4A16GemmInfo, a);
    FIELD(BkW4A16GemmInfo, packed);
    FIELD(BkW4A16GemmInfo, packedScales);
    FIELD(BkW4A16GemmInfo, perm);
    FIELD(BkW4A16GemmInfo, c);

    STRUCT(BkAttentionPattern);
    FIELD(BkAttentionPattern, form);
    FIELD(BkAttentionPattern, blockQ);
    FIELD(BkAttentionPattern, blockK);
    FIELD(BkAttentionPattern, reserved);
    FIELD(BkAttentionPattern, mask);
    FIELD(BkAttentionPattern, counts);
    FIELD(BkAttentionPattern, indices);

    STRUCT(BkAttentionInfo);
    FIELD(BkAttentionInfo, sType);
    FIELD(BkAttentionInfo, pNext);
    FIELD(BkAttentionInfo, flags);
    FIELD(BkAttentionInfo, reserved);
    FIELD(BkAttentionInfo, scale);
    FIELD(BkAttentionInfo, pattern);
    FIELD(BkAttentionInfo, q);
    FIELD(BkAttentionInfo, k);
    FIELD(BkAttentionInfo, v);
    FIELD(BkAttentionInfo, y);
    FIELD(BkAttentionInfo, lse);

    STRUCT(BkAttentionBackwardInfo);
    FIELD(BkAttentionBackwardInfo, sType);
    FIELD(BkAttentionBackwardInfo, pNext);
    FIELD(BkAttentionBackwardInfo, flags);
    FIELD(BkAttentionBackwardInfo, reserved);
    FIELD(BkAttentionBackwardInfo, scale);
    FIELD(BkAttentionBackwardInfo, pattern);
    FIELD(BkAttentionBackwardInfo, q);
    FIELD(BkAttentionBackwardInfo, k);
    FIELD(BkAttentionBackwardInfo, v);
    FIELD(BkAttentionBackwardInfo, y);
    FIELD(BkAttentionBackwardInfo, lse);
    FIELD(BkAttentionBackwardInfo, dy);
    FIELD(BkAttentionBackwardInfo, dq);
    FIELD(BkAttentionBackwardInfo, dk);
    FIELD(BkAttentionBackwardInfo, dv);

    CONST(BK_VERSION_MAJOR);
    CONST(BK_VERSION_MINOR);
    CONST(BK_VERSION_PATCH);
    CONST(BK_HEADER_VERSION);
    CONST(BK_MAX_TENSOR_RANK);
    CONST(BK_MAX_NAME_SIZE);
    CONST(BK_MAX_KERNEL_NAME_SIZE);
    CONST(BK_MAX_MODULE_ARCHITECTURES);
    CONST(BK_MAX_BINDINGS);
    CONST(BK_MAX_BINDING_NAME_SIZE);
    CONST(BK_TRUE);
    CONST(BK_FALSE);

    CONST(BK_SUCCESS);
    CONST(BK_INCOMPLETE);
    CONST(BK_ERROR_INVALID_ARGUMENT);
    CONST(BK_ERROR_UNSUPPORTED);
    CONST(BK_ERROR_MISALIGNED_OPERAND);
    CONST(BK_ERROR_WORKSPACE_TOO_SMALL);
    CONST(BK_ERROR_BUFFER_TOO_SMALL);
    CONST(BK_ERROR_OUT_OF_HOST_MEMORY);
    CONST(BK_ERROR_OUT_OF_DEVICE_MEMORY);
    CONST(BK_ERROR_DRIVER_NOT_FOUND);
    CONST(BK_ERROR_NO_DEVICE);
    CONST(BK_ERROR_DEVICE_LOST);
    CONST(BK_ERROR_MODULE_LOAD_FAILED);
    CONST(BK_ERROR_INCOMPATIBLE_VERSION);
    CONST(BK_ERROR_INVALID_STATE);
    CONST(BK_RESULT_MAX_ENUM);

    CONST(BK_STRUCTURE_TYPE_UNDEFINED);
    CONST(BK_STRUCTURE_TYPE_DEVICE_PROPERTIES);
    CONST(BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO);
    CONST(BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
    CONST(BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
    CONST(BK_STRUCTURE_TYPE_PLAN_CREATE_INFO);
    CONST(BK_STRUCTURE_TYPE_PLAN_PROPERTIES);
    CONST(BK_STRUCTURE_TYPE_RUN_INFO);
    CONST(BK_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES);
    CONST(BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES);
    CONST(BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO);
    CONST(BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO);
    CONST(BK_STRUCTURE_TYPE_GEMM_INFO);
    CONST(BK_STRUCTURE_TYPE_SPARSE24_CONVERT_INFO);
    CONST(BK_STRUCTURE_TYPE_SPARSE24_PREPARE_INFO);
    CONST(BK_STRUCTURE_TYPE_SPARSE24_GEMM_INFO);
    CONST(BK_STRUCTURE_TYPE_W4A16_CONVERT_INFO);
    CONST(BK_STRUCTURE_TYPE_W4A16_GPTQ_REPACK_INFO);
    CONST(BK_STRUCTURE_TYPE_W4A16_GEMM_INFO);
    CONST(BK_STRUCTURE_TYPE_ATTENTION_INFO);
    CONST(BK_STRUCTURE_TYPE_ATTENTION_BACKWARD_INFO);
    CONST(BK_STRUCTURE_TYPE_MAX_ENUM);

    CONST(BK_DATA_TYPE_UNDEFINED);
    CONST(BK_DATA_TYPE_F32);
    CONST(BK_DATA_TYPE_F16);
    CONST(BK_DATA_TYPE_BF16);
    CONST(BK_DATA_TYPE_F64);
    CONST(BK_DATA_TYPE_I32);
    CONST(BK_DATA_TYPE_U16);
    CONST(BK_DATA_TYPE_U8);
    CONST(BK_DATA_TYPE_I8);
    CONST(BK_DATA_TYPE_U32);
    CONST(BK_DATA_TYPE_TF32);
    CONST(BK_DATA_TYPE_MAX_ENUM);

    CONST(BK_DEVICE_TYPE_AUTO);
    CONST(BK_DEVICE_TYPE_HOST);
    CONST(BK_DEVICE_TYPE_CUDA);
    CONST(BK_DEVICE_TYPE_MAX_ENUM);

    CONST(BK_MEMORY_TYPE_DEVICE);
    CONST(BK_MEMORY_TYPE_HOST_PINNED);
    CONST(BK_MEMORY_TYPE_MAX_ENUM);

    CONST(BK_COMMAND_BUFFER_USAGE_ONE_TIME);
    CONST(BK_COMMAND_BUFFER_USAGE_REUSABLE);
    CONST(BK_COMMAND_BUFFER_USAGE_MAX_ENUM);

    CONST(BK_GATED_ACTIVATION_GLU);
    CONST(BK_GATED_ACTIVATION_REGLU);
    CONST(BK_GATED_ACTIVATION_SWIGLU);
    CONST(BK_GATED_ACTIVATION_GEGLU);
    CONST(BK_GATED_ACTIVATION_GEGLU_TANH);
    CONST(BK_GATED_ACTIVATION_KIND_MAX_ENUM);
    CONST(BK_GATED_ACTIVATION_BINDING_INPUT);
    CONST(BK_GATED_ACTIVATION_BINDING_OUTPUT);
    CONST(BK_GATED_ACTIVATION_BACKWARD_BINDING_INPUT);
    CONST(BK_GATED_ACTIVATION_BACKWARD_BINDING_GRAD_OUTPUT);
    CONST(BK_GATED_ACTIVATION_BACKWARD_BINDING_GRAD_INPUT);

    CONST(BK_GEMM_OP_N);
    CONST(BK_GEMM_OP_T);
    CONST(BK_GEMM_OP_MAX_ENUM);

    CONST(BK_GEMM_ACTIVATION_NONE);
    CONST(BK_GEMM_ACTIVATION_RELU);
    CONST(BK_GEMM_ACTIVATION_GELU_TANH);
    CONST(BK_GEMM_ACTIVATION_MAX_ENUM);

    CONST(BK_GEMM_ALLOW_TF32_BIT);
    CONST(BK_GEMM_FLAG_BITS_MAX_ENUM);

    CONST(BK_GEMM_BINDING_A);
    CONST(BK_GEMM_BINDING_B);
    CONST(BK_GEMM_BINDING_C);
    CONST(BK_GEMM_BINDING_D);
    CONST(BK_GEMM_BINDING_BIAS);

    CONST(BK_SPARSE24_COMPRESS_STRICT);
    CONST(BK_SPARSE24_COMPRESS_PRUNE);
    CONST(BK_SPARSE24_DECOMPRESS);
    CONST(BK_SPARSE24_VALIDATE);
    CONST(BK_SPARSE24_CONVERSION_MAX_ENUM);

    CONST(BK_SPARSE24_STATUS_OK);
    CONST(BK_SPARSE24_STATUS_TOO_MANY_NONZEROS);
    CONST(BK_SPARSE24_STATUS_BAD_METADATA);
    CONST(BK_SPARSE24_STATUS_MAX_ENUM);

    CONST(BK_SPARSE24_CONVERT_BINDING_DENSE);
    CONST(BK_SPARSE24_CONVERT_BINDING_VALUES);
    CONST(BK_SPARSE24_CONVERT_BINDING_METADATA);
    CONST(BK_SPARSE24_CONVERT_BINDING_REPORT);

    CONST(BK_SPARSE24_PREPARE_BINDING_VALUES);
    CONST(BK_SPARSE24_PREPARE_BINDING_METADATA);
    CONST(BK_SPARSE24_PREPARE_BINDING_PREPARED);

    CONST(BK_SPARSE24_GEMM_BINDING_WEIGHT);
    CONST(BK_SPARSE24_GEMM_BINDING_X);
    CONST(BK_SPARSE24_GEMM_BINDING_C);
    CONST(BK_SPARSE24_GEMM_BINDING_Y);
    CONST(BK_SPARSE24_GEMM_BINDING_BIAS);

    CONST(BK_W4A16_GROUP_PER_CHANNEL);

    CONST(BK_W4A16_QUANTIZE);
    CONST(BK_W4A16_PACK);
    CONST(BK_W4A16_UNPACK);
    CONST(BK_W4A16_CONVERSION_MAX_ENUM);

    CONST(BK_W4A16_CONVERT_BINDING_WEIGHT);
    CONST(BK_W4A16_CONVERT_BINDING_QUANTIZED);
    CONST(BK_W4A16_CONVERT_BINDING_SCALES);
    CONST(BK_W4A16_CONVERT_BINDING_PACKED);
    CONST(BK_W4A16_CONVERT_BINDING_PACKED_SCALES);

    CONST(BK_W4A16_GPTQ_ZEROS_EXACT);
    CONST(BK_W4A16_GPTQ_ZEROS_MINUS_ONE);
    CONST(BK_W4A16_GPTQ_ZEROS_MAX_ENUM);

    CONST(BK_W4A16_REPACK_STATUS_OK);
    CONST(BK_W4A16_REPACK_STATUS_ASYMMETRIC);
    CONST(BK_W4A16_REPACK_STATUS_BAD_GROUP_INDEX);
    CONST(BK_W4A16_REPACK_STATUS_UNEVEN_GROUPS);
    CONST(BK_W4A16_REPACK_STATUS_MAX_ENUM);

    CONST(BK_W4A16_REPACK_BINDING_QWEIGHT);
    CONST(BK_W4A16_REPACK_BINDING_SCALES);
    CONST(BK_W4A16_REPACK_BINDING_QZEROS);
    CONST(BK_W4A16_REPACK_BINDING_G_IDX);
    CONST(BK_W4A16_REPACK_BINDING_PACKED);
    CONST(BK_W4A16_REPACK_BINDING_PACKED_SCALES);
    CONST(BK_W4A16_REPACK_BINDING_PERM);
    CONST(BK_W4A16_REPACK_BINDING_REPORT);

    CONST(BK_W4A16_GEMM_BINDING_A);
    CONST(BK_W4A16_GEMM_BINDING_PACKED);
    CONST(BK_W4A16_GEMM_BINDING_PACKED_SCALES);
    CONST(BK_W4A16_GEMM_BINDING_PERM);
    CONST(BK_W4A16_GEMM_BINDING_C);

    CONST(BK_ATTENTION_CAUSAL_BIT);
    CONST(BK_ATTENTION_ALLOW_ATOMICS_BIT);
    CONST(BK_ATTENTION_FLAG_BITS_MAX_ENUM);

    CONST(BK_ATTENTION_PATTERN_DENSE);
    CONST(BK_ATTENTION_PATTERN_MASK);
    CONST(BK_ATTENTION_PATTERN_LIST);
    CONST(BK_ATTENTION_PATTERN_FORM_MAX_ENUM);

    CONST(BK_ATTENTION_BINDING_Q);
    CONST(BK_ATTENTION_BINDING_K);
    CONST(BK_ATTENTION_BINDING_V);
    CONST(BK_ATTENTION_BINDING_MASK);
    CONST(BK_ATTENTION_BINDING_COUNTS);
    CONST(BK_ATTENTION_BINDING_INDICES);
    CONST(BK_ATTENTION_BINDING_Y);
    CONST(BK_ATTENTION_BINDING_LSE);

    CONST(BK_ATTENTION_BACKWARD_BINDING_Q);
    CONST(BK_ATTENTION_BACKWARD_BINDING_K);
    CONST(BK_ATTENTION_BACKWARD_BINDING_V);
    CONST(BK_ATTENTION_BACKWARD_BINDING_MASK);
    CONST(BK_ATTENTION_BACKWARD_BINDING_COUNTS);
    CONST(BK_ATTENTION_BACKWARD_BINDING_INDICES);
    CONST(BK_ATTENTION_BACKWARD_BINDING_Y);
    CONST(BK_ATTENTION_BACKWARD_BINDING_LSE);
    CONST(BK_ATTENTION_BACKWARD_BINDING_DY);
    CONST(BK_ATTENTION_BACKWARD_BINDING_DQ);
    CONST(BK_ATTENTION_BACKWARD_BINDING_DK);
    CONST(BK_ATTENTION_BACKWARD_BINDING_DV);

    /* Function-like macros, on values that use every bit field. */
    printf("macro BK_MAKE_VERSION(1023,1023,4095) %lld\n",
           (long long)BK_MAKE_VERSION(1023, 1023, 4095));
    printf("macro BK_VERSION_GET_MAJOR(BK_MAKE_VERSION(1022,5,6)) %lld\n",
           (long long)BK_VERSION_GET_MAJOR(BK_MAKE_VERSION(1022, 5, 6)));
    printf("macro BK_VERSION_GET_MINOR(BK_MAKE_VERSION(1,1021,6)) %lld\n",
           (long long)BK_VERSION_GET_MINOR(BK_MAKE_VERSION(1, 1021, 6)));
    printf("macro BK_VERSION_GET_PATCH(BK_MAKE_VERSION(1,2,4093)) %lld\n",
           (long long)BK_VERSION_GET_PATCH(BK_MAKE_VERSION(1, 2, 4093)));
    return 0;
}
