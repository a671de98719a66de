! SPDX-License-Identifier: Apache-2.0
! Prints, from the Fortran module, the table t/fortran_layout_c prints from
! C: sizes of handles and structs, offset and size of every field, the
! value of every constant and of the version functions. Offsets are
! measured on a TARGET variable of each type: c_loc(v%field) - c_loc(v).
program fortran_layout_f
  use, intrinsic :: iso_c_binding
  use bk
  implicit none
  type(BkContext) :: hc
  type(BkQueue) :: hq
  type(BkCommandBuffer) :: hb
  type(BkPlan) :: hp
  type(BkMemory) :: hm
  type(BkBaseInStructure), target :: base
  type(BkTensorDesc), target :: td
  type(BkAllocationCallbacks), target :: ac
  type(BkDeviceProperties), target :: dp
  type(BkDeviceModuleProperties), target :: dmp
  type(BkContextCreateInfo), target :: cci
  type(BkMemoryAllocateInfo), target :: mai
  type(BkCommandBufferBeginInfo), target :: cbbi
  type(BkPlanCreateInfo), target :: pci
  type(BkPrecisionGuarantee), target :: pg
  type(BkPlanProperties), target :: pp
  type(BkRunInfo), target :: ri
  type(BkGatedActivationInfo), target :: gai
  type(BkGatedActivationBackwardInfo), target :: gabi
  type(BkBaseOutStructure), target :: bout
  type(BkBindingProperties), target :: bnp
  type(BkPlanBindingProperties), target :: pbp
  type(BkGemmInfo), target :: gi
  type(BkSparse24Report), target :: s24r
  type(BkSparse24ConvertInfo), target :: s24c
  type(BkSparse24PrepareInfo), target :: s24p
  type(BkSparse24GemmInfo), target :: s24g
  type(BkW4A16ConvertInfo), target :: w4c
  type(BkW4A16RepackReport), target :: w4r
  type(BkW4A16GptqRepackInfo), target :: w4p
  type(BkW4A16GemmInfo), target :: w4g
  type(BkAttentionPattern), target :: atp
  type(BkAttentionInfo), target :: ati
  type(BkAttentionBackwardInfo), target :: atb

  call size_of('BkContext', c_sizeof(hc))
  call size_of('BkQueue', c_sizeof(hq))
  call size_of('BkCommandBuffer', c_sizeof(hb))
  call size_of('BkPlan', c_sizeof(hp))
  call size_of('BkMemory', c_sizeof(hm))

  call size_of('BkBaseInStructure', c_sizeof(base))
  call field('BkBaseInStructure.sType', c_loc(base), c_loc(base%sType), c_sizeof(base%sType))
  call field('BkBaseInStructure.pNext', c_loc(base), c_loc(base%pNext), c_sizeof(base%pNext))

  call size_of('BkBaseOutStructure', c_sizeof(bout))
  call field('BkBaseOutStructure.sType', c_loc(bout), c_loc(bout%sType), c_sizeof(bout%sType))
  call field('BkBaseOutStructure.pNext', c_loc(bout), c_loc(bout%pNext), c_sizeof(bout%pNext))

  call size_of('BkTensorDesc', c_sizeof(td))
  call field('BkTensorDesc.dataType', c_loc(td), c_loc(td%dataType), c_sizeof(td%dataType))
  call field('BkTensorDesc.rank', c_loc(td), c_loc(td%rank), c_sizeof(td%rank))
  call field('BkTensorDesc.extent', c_loc(td), c_loc(td%extent), c_sizeof(td%extent))
  call field('BkTensorDesc.stride', c_loc(td), c_loc(td%stride), c_sizeof(td%stride))

  call size_of('BkAllocationCallbacks', c_sizeof(ac))
  call field('BkAllocationCallbacks.pUserData', c_loc(ac), c_loc(ac%pUserData), &
       c_sizeof(ac%pUserData))
  call field('BkAllocationCallbacks.pfnAllocation', c_loc(ac), c_loc(ac%pfnAllocation), &
       c_sizeof(ac%pfnAllocation))
  call field('BkAllocationCallbacks.pfnFree', c_loc(ac), c_loc(ac%pfnFree), c_sizeof(ac%pfnFree))

  call size_of('BkDeviceProperties', c_sizeof(dp))
  call field('BkDeviceProperties.sType', c_loc(dp), c_loc(dp%sType), c_sizeof(dp%sType))
  call field('BkDeviceProperties.pNext', c_loc(dp), c_loc(dp%pNext), c_sizeof(dp%pNext))
  call field('BkDeviceProperties.deviceType', c_loc(dp), c_loc(dp%deviceType), &
       c_sizeof(dp%deviceType))
  call field('BkDeviceProperties.deviceIndex', c_loc(dp), c_loc(dp%deviceIndex), &
       c_sizeof(dp%deviceIndex))
  call field('BkDeviceProperties.name', c_loc(dp), c_loc(dp%name), c_sizeof(dp%name))
  call field('BkDeviceProperties.computeCapabilityMajor', c_loc(dp), &
       c_loc(dp%computeCapabilityMajor), c_sizeof(dp%computeCapabilityMajor))
  call field('BkDeviceProperties.computeCapabilityMinor', c_loc(dp), &
       c_loc(dp%computeCapabilityMinor), c_sizeof(dp%computeCapabilityMinor))
  call field('BkDeviceProperties.multiprocessorCount', c_loc(dp), &
       c_loc(dp%multiprocessorCount), c_sizeof(dp%multiprocessorCount))
  call field('BkDeviceProperties.queueCount', c_loc(dp), c_loc(dp%queueCount), &
       c_sizeof(dp%queueCount))
  call field('BkDeviceProperties.totalMemory', c_loc(dp), c_loc(dp%totalMemory), &
       c_sizeof(dp%totalMemory))
  call field('BkDeviceProperties.driverVersion', c_loc(dp), c_loc(dp%driverVersion), &
       c_sizeof(dp%driverVersion))
  call field('BkDeviceProperties.runtimeVersion', c_loc(dp), c_loc(dp%runtimeVersion), &
       c_sizeof(dp%runtimeVersion))

  call size_of('BkDeviceModuleProperties', c_sizeof(dmp))
  call field('BkDeviceModuleProperties.sType', c_loc(dmp), c_loc(dmp%sType), c_sizeof(dmp%sType))
  call field('BkDeviceModuleProperties.pNext', c_loc(dmp), c_loc(dmp%pNext), c_sizeof(dmp%pNext))
  call field('BkDeviceModuleProperties.binaryArchitectureCount', c_loc(dmp), &
       c_loc(dmp%binaryArchitectureCount), c_sizeof(dmp%binaryArchitectureCount))
  call field('BkDeviceModuleProperties.binaryArchitectures', c_loc(dmp), &
       c_loc(dmp%binaryArchitectures), c_sizeof(dmp%binaryArchitectures))
  call field('BkDeviceModuleProperties.ptxArchitectureCount', c_loc(dmp), &
       c_loc(dmp%ptxArchitectureCount), c_sizeof(dmp%ptxArchitectureCount))
  call field('BkDeviceModuleProperties.ptxArchitectures', c_loc(dmp), &
       c_loc(dmp%ptxArchitectures), c_sizeof(dmp%ptxArchitectures))
  call field('BkDeviceModuleProperties.deviceSupported', c_loc(dmp), &
       c_loc(dmp%deviceSupported), c_sizeof(dmp%deviceSupported))

  call size_of('BkContextCreateInfo', c_sizeof(cci))
  call field('BkContextCreateInfo.sType', c_loc(cci), c_loc(cci%sType), c_sizeof(cci%sType))
  call field('BkContextCreateInfo.pNext', c_loc(cci), c_loc(cci%pNext), c_sizeof(cci%pNext))
  call field('BkContextCreateInfo.deviceType', c_loc(cci), c_loc(cci%deviceType), &
       c_sizeof(cci%deviceType))
  call field('BkContextCreateInfo.deviceIndex', c_loc(cci), c_loc(cci%deviceIndex), &
       c_sizeof(cci%deviceIndex))
  call field('BkContextCreateInfo.apiVersion', c_loc(cci), c_loc(cci%apiVersion), &
       c_sizeof(cci%apiVersion))
  call field('BkContextCreateInfo.flags', c_loc(cci), c_loc(cci%flags), c_sizeof(cci%flags))

  call size_of('BkMemoryAllocateInfo', c_sizeof(mai))
  call field('BkMemoryAllocateInfo.sType', c_loc(mai), c_loc(mai%sType), c_sizeof(mai%sType))
  call field('BkMemoryAllocateInfo.pNext', c_loc(mai), c_loc(mai%pNext), c_sizeof(mai%pNext))
  call field('BkMemoryAllocateInfo.size', c_loc(mai), c_loc(mai%size), c_sizeof(mai%size))
  call field('BkMemoryAllocateInfo.memoryType', c_loc(mai), c_loc(mai%memoryType), &
       c_sizeof(mai%memoryType))

  call size_of('BkCommandBufferBeginInfo', c_sizeof(cbbi))
  call field('BkCommandBufferBeginInfo.sType', c_loc(cbbi), c_loc(cbbi%sType), &
       c_sizeof(cbbi%sType))
  call field('BkCommandBufferBeginInfo.pNext', c_loc(cbbi), c_loc(cbbi%pNext), &
       c_sizeof(cbbi%pNext))
  call field('BkCommandBufferBeginInfo.usage', c_loc(cbbi), c_loc(cbbi%usage), &
       c_sizeof(cbbi%usage))

  call size_of('BkPlanCreateInfo', c_sizeof(pci))
  call field('BkPlanCreateInfo.sType', c_loc(pci), c_loc(pci%sType), c_sizeof(pci%sType))
  call field('BkPlanCreateInfo.pNext', c_loc(pci), c_loc(pci%pNext), c_sizeof(pci%pNext))
  call field('BkPlanCreateInfo.pOperation', c_loc(pci), c_loc(pci%pOperation), &
       c_sizeof(pci%pOperation))
  call field('BkPlanCreateInfo.flags', c_loc(pci), c_loc(pci%flags), c_sizeof(pci%flags))

  call size_of('BkPrecisionGuarantee', c_sizeof(pg))
  call field('BkPrecisionGuarantee.computeType', c_loc(pg), c_loc(pg%computeType), &
       c_sizeof(pg%computeType))
  call field('BkPrecisionGuarantee.accumulatorType', c_loc(pg), c_loc(pg%accumulatorType), &
       c_sizeof(pg%accumulatorType))
  call field('BkPrecisionGuarantee.deterministic', c_loc(pg), c_loc(pg%deterministic), &
       c_sizeof(pg%deterministic))
  call field('BkPrecisionGuarantee.bitStable', c_loc(pg), c_loc(pg%bitStable), &
       c_sizeof(pg%bitStable))

  call size_of('BkPlanProperties', c_sizeof(pp))
  call field('BkPlanProperties.sType', c_loc(pp), c_loc(pp%sType), c_sizeof(pp%sType))
  call field('BkPlanProperties.pNext', c_loc(pp), c_loc(pp%pNext), c_sizeof(pp%pNext))
  call field('BkPlanProperties.operation', c_loc(pp), c_loc(pp%operation), &
       c_sizeof(pp%operation))
  call field('BkPlanProperties.backend', c_loc(pp), c_loc(pp%backend), c_sizeof(pp%backend))
  call field('BkPlanProperties.bindingCount', c_loc(pp), c_loc(pp%bindingCount), &
       c_sizeof(pp%bindingCount))
  call field('BkPlanProperties.workspaceSize', c_loc(pp), c_loc(pp%workspaceSize), &
       c_sizeof(pp%workspaceSize))
  call field('BkPlanProperties.workspaceAlignment', c_loc(pp), c_loc(pp%workspaceAlignment), &
       c_sizeof(pp%workspaceAlignment))
  call field('BkPlanProperties.kernelName', c_loc(pp), c_loc(pp%kernelName), &
       c_sizeof(pp%kernelName))
  call field('BkPlanProperties.precision', c_loc(pp), c_loc(pp%precision), &
       c_sizeof(pp%precision))

  call size_of('BkBindingProperties', c_sizeof(bnp))
  call field('BkBindingProperties.name', c_loc(bnp), c_loc(bnp%name), c_sizeof(bnp%name))
  call field('BkBindingProperties.size', c_loc(bnp), c_loc(bnp%size), c_sizeof(bnp%size))
  call field('BkBindingProperties.alignment', c_loc(bnp), c_loc(bnp%alignment), &
       c_sizeof(bnp%alignment))
  call field('BkBindingProperties.written', c_loc(bnp), c_loc(bnp%written), c_sizeof(bnp%written))
  call field('BkBindingProperties.reserved', c_loc(bnp), c_loc(bnp%reserved), &
       c_sizeof(bnp%reserved))

  call size_of('BkPlanBindingProperties', c_sizeof(pbp))
  call field('BkPlanBindingProperties.sType', c_loc(pbp), c_loc(pbp%sType), c_sizeof(pbp%sType))
  call field('BkPlanBindingProperties.pNext', c_loc(pbp), c_loc(pbp%pNext), c_sizeof(pbp%pNext))
  call field('BkPlanBindingProperties.bindingCount', c_loc(pbp), c_loc(pbp%bindingCount), &
       c_sizeof(pbp%bindingCount))
  call field('BkPlanBindingProperties.reserved', c_loc(pbp), c_loc(pbp%reserved), &
       c_sizeof(pbp%reserved))
  call field('BkPlanBindingProperties.bindings', c_loc(pbp), c_loc(pbp%bindings), &
       c_sizeof(pbp%bindings))

  call size_of('BkRunInfo', c_sizeof(ri))
  call field('BkRunInfo.sType', c_loc(ri), c_loc(ri%sType), c_sizeof(ri%sType))
  call field('BkRunInfo.pNext', c_loc(ri), c_loc(ri%pNext), c_sizeof(ri%pNext))
  call field('BkRunInfo.bindingCount', c_loc(ri), c_loc(ri%bindingCount), &
       c_sizeof(ri%bindingCount))
  call field('BkRunInfo.pBindings', c_loc(ri), c_loc(ri%pBindings), c_sizeof(ri%pBindings))
  call field('BkRunInfo.pBindingSizes', c_loc(ri), c_loc(ri%pBindingSizes), &
       c_sizeof(ri%pBindingSizes))
  call field('BkRunInfo.workspace', c_loc(ri), c_loc(ri%workspace), c_sizeof(ri%workspace))
  call field('BkRunInfo.workspaceSize', c_loc(ri), c_loc(ri%workspaceSize), &
       c_sizeof(ri%workspaceSize))

  call size_of('BkGatedActivationInfo', c_sizeof(gai))
  call field('BkGatedActivationInfo.sType', c_loc(gai), c_loc(gai%sType), c_sizeof(gai%sType))
  call field('BkGatedActivationInfo.pNext', c_loc(gai), c_loc(gai%pNext), c_sizeof(gai%pNext))
  call field('BkGatedActivationInfo.kind', c_loc(gai), c_loc(gai%kind), c_sizeof(gai%kind))
  call field('BkGatedActivationInfo.splitAxis', c_loc(gai), c_loc(gai%splitAxis), &
       c_sizeof(gai%splitAxis))
  call field('BkGatedActivationInfo.input', c_loc(gai), c_loc(gai%input), c_sizeof(gai%input))
  call field('BkGatedActivationInfo.output', c_loc(gai), c_loc(gai%output), &
       c_sizeof(gai%output))

  call size_of('BkGatedActivationBackwardInfo', c_sizeof(gabi))
  call field('BkGatedActivationBackwardInfo.sType', c_loc(gabi), c_loc(gabi%sType), &
       c_sizeof(gabi%sType))
  call field('BkGatedActivationBackwardInfo.pNext', c_loc(gabi), c_loc(gabi%pNext), &
       c_sizeof(gabi%pNext))
  call field('BkGatedActivationBackwardInfo.kind', c_loc(gabi), c_loc(gabi%kind), &
       c_sizeof(gabi%kind))
  call field('BkGatedActivationBackwardInfo.splitAxis', c_loc(gabi), c_loc(gabi%splitAxis), &
       c_sizeof(gabi%splitAxis))
  call field('BkGatedActivationBackwardInfo.input', c_loc(gabi), c_loc(gabi%input), &
       c_sizeof(gabi%input))
  call field('BkGatedActivationBackwardInfo.gradOutput', c_loc(gabi), c_loc(gabi%gradOutput), &
       c_sizeof(gabi%gradOutput))
  call field('BkGatedActivationBackwardInfo.gradInput', c_loc(gabi), c_loc(gabi%gradInput), &
       c_sizeof(gabi%gradInput))

  call size_of('BkGemmInfo', c_sizeof(gi))
  call field('BkGemmInfo.sType', c_loc(gi), c_loc(gi%sType), c_sizeof(gi%sType))
  call field('BkGemmInfo.pNext', c_loc(gi), c_loc(gi%pNext), c_sizeof(gi%pNext))
  call field('BkGemmInfo.transA', c_loc(gi), c_loc(gi%transA), c_sizeof(gi%transA))
  call field('BkGemmInfo.transB', c_loc(gi), c_loc(gi%transB), c_sizeof(gi%transB))
  call field('BkGemmInfo.activation', c_loc(gi), c_loc(gi%activation), c_sizeof(gi%activation))
  call field('BkGemmInfo.flags', c_loc(gi), c_loc(gi%flags), c_sizeof(gi%flags))
  call field('BkGemmInfo.alpha', c_loc(gi), c_loc(gi%alpha), c_sizeof(gi%alpha))
  call field('BkGemmInfo.beta', c_loc(gi), c_loc(gi%beta), c_sizeof(gi%beta))
  call field('BkGemmInfo.a', c_loc(gi), c_loc(gi%a), c_sizeof(gi%a))
  call field('BkGemmInfo.b', c_loc(gi), c_loc(gi%b), c_sizeof(gi%b))
  call field('BkGemmInfo.c', c_loc(gi), c_loc(gi%c), c_sizeof(gi%c))
  call field('BkGemmInfo.d', c_loc(gi), c_loc(gi%d), c_sizeof(gi%d))
  call field('BkGemmInfo.bias', c_loc(gi), c_loc(gi%bias), c_sizeof(gi%bias))

  call size_of('BkSparse24Report', c_sizeof(s24r))
  call field('BkSparse24Report.status', c_loc(s24r), c_loc(s24r%status), c_sizeof(s24r%status))
  call field('BkSparse24Report.reserved', c_loc(s24r), c_loc(s24r%reserved), &
       c_sizeof(s24r%reserved))
  call field('BkSparse24Report.badGroupCount', c_loc(s24r), c_loc(s24r%badGroupCount), &
       c_sizeof(s24r%badGroupCount))
  call field('BkSparse24Report.firstBadRow', c_loc(s24r), c_loc(s24r%firstBadRow), &
       c_sizeof(s24r%firstBadRow))
  call field('BkSparse24Report.firstBadGroup', c_loc(s24r), c_loc(s24r%firstBadGroup), &
       c_sizeof(s24r%firstBadGroup))

  call size_of('BkSparse24ConvertInfo', c_sizeof(s24c))
  call field('BkSparse24ConvertInfo.sType', c_loc(s24c), c_loc(s24c%sType), c_sizeof(s24c%sType))
  call field('BkSparse24ConvertInfo.pNext', c_loc(s24c), c_loc(s24c%pNext), c_sizeof(s24c%pNext))
  call field('BkSparse24ConvertInfo.conversion', c_loc(s24c), c_loc(s24c%conversion), &
       c_sizeof(s24c%conversion))
  call field('BkSparse24ConvertInfo.reserved', c_loc(s24c), c_loc(s24c%reserved), &
       c_sizeof(s24c%reserved))
  call field('BkSparse24ConvertInfo.dense', c_loc(s24c), c_loc(s24c%dense), c_sizeof(s24c%dense))
  call field('BkSparse24ConvertInfo.values', c_loc(s24c), c_loc(s24c%values), c_sizeof(s24c%values))
  call field('BkSparse24ConvertInfo.metadata', c_loc(s24c), c_loc(s24c%metadata), &
       c_sizeof(s24c%metadata))

  call size_of('BkSparse24PrepareInfo', c_sizeof(s24p))
  call field('BkSparse24PrepareInfo.sType', c_loc(s24p), c_loc(s24p%sType), c_sizeof(s24p%sType))
  call field('BkSparse24PrepareInfo.pNext', c_loc(s24p), c_loc(s24p%pNext), c_sizeof(s24p%pNext))
  call field('BkSparse24PrepareInfo.values', c_loc(s24p), c_loc(s24p%values), c_sizeof(s24p%values))
  call field('BkSparse24PrepareInfo.metadata', c_loc(s24p), c_loc(s24p%metadata), &
       c_sizeof(s24p%metadata))

  call size_of('BkSparse24GemmInfo', c_sizeof(s24g))
  call field('BkSparse24GemmInfo.sType', c_loc(s24g), c_loc(s24g%sType), c_sizeof(s24g%sType))
  call field('BkSparse24GemmInfo.pNext', c_loc(s24g), c_loc(s24g%pNext), c_sizeof(s24g%pNext))
  call field('BkSparse24GemmInfo.weightType', c_loc(s24g), c_loc(s24g%weightType), &
       c_sizeof(s24g%weightType))
  call field('BkSparse24GemmInfo.activation', c_loc(s24g), c_loc(s24g%activation), &
       c_sizeof(s24g%activation))
  call field('BkSparse24GemmInfo.m', c_loc(s24g), c_loc(s24g%m), c_sizeof(s24g%m))
  call field('BkSparse24GemmInfo.k', c_loc(s24g), c_loc(s24g%k), c_sizeof(s24g%k))
  call field('BkSparse24GemmInfo.alpha', c_loc(s24g), c_loc(s24g%alpha), c_sizeof(s24g%alpha))
  call field('BkSparse24GemmInfo.beta', c_loc(s24g), c_loc(s24g%beta), c_sizeof(s24g%beta))
  call field('BkSparse24GemmInfo.x', c_loc(s24g), c_loc(s24g%x), c_sizeof(s24g%x))
  call field('BkSparse24GemmInfo.c', c_loc(s24g), c_loc(s24g%c), c_sizeof(s24g%c))
  call field('BkSparse24GemmInfo.y', c_loc(s24g), c_loc(s24g%y), c_sizeof(s24g%y))
  call field('BkSparse24GemmInfo.bias', c_loc(s24g), c_loc(s24g%bias), c_sizeof(s24g%bias))

  call size_of('BkW4A16ConvertInfo', c_sizeof(w4c))
  call field('BkW4A16ConvertInfo.sType', c_loc(w4c), c_loc(w4c%sType), c_sizeof(w4c%sType))
  call field('BkW4A16ConvertInfo.pNext', c_loc(w4c), c_loc(w4c%pNext), c_sizeof(w4c%pNext))
  call field('BkW4A16ConvertInfo.conversion', c_loc(w4c), c_loc(w4c%conversion), &
       c_sizeof(w4c%conversion))
  call field('BkW4A16ConvertInfo.groupSize', c_loc(w4c), c_loc(w4c%groupSize), &
       c_sizeof(w4c%groupSize))
  call field('BkW4A16ConvertInfo.weight', c_loc(w4c), c_loc(w4c%weight), c_sizeof(w4c%weight))
  call field('BkW4A16ConvertInfo.quantized', c_loc(w4c), c_loc(w4c%quantized), &
       c_sizeof(w4c%quantized))
  call field('BkW4A16ConvertInfo.scales', c_loc(w4c), c_loc(w4c%scales), c_sizeof(w4c%scales))
  call field('BkW4A16ConvertInfo.packed', c_loc(w4c), c_loc(w4c%packed), c_sizeof(w4c%packed))
  call field('BkW4A16ConvertInfo.packedScales', c_loc(w4c), c_loc(w4c%packedScales), &
       c_sizeof(w4c%packedScales))

  call size_of('BkW4A16RepackReport', c_sizeof(w4r))
  call field('BkW4A16RepackReport.status', c_loc(w4r), c_loc(w4r%status), c_sizeof(w4r%status))
  call field('BkW4A16RepackReport.identityPermutation', c_loc(w4r), &
       c_loc(w4r%identityPermutation), c_sizeof(w4r%identityPermutation))
  call field('BkW4A16RepackReport.badCount', c_loc(w4r), c_loc(w4r%badCount), &
       c_sizeof(w4r%badCount))
  call field('BkW4A16RepackReport.firstBadRow', c_loc(w4r), c_loc(w4r%firstBadRow), &
       c_sizeof(w4r%firstBadRow))
  call field('BkW4A16RepackReport.firstBadColumn', c_loc(w4r), c_loc(w4r%firstBadColumn), &
       c_sizeof(w4r%firstBadColumn))

  call size_of('BkW4A16GptqRepackInfo', c_sizeof(w4p))
  call field('BkW4A16GptqRepackInfo.sType', c_loc(w4p), c_loc(w4p%sType), c_sizeof(w4p%sType))
  call field('BkW4A16GptqRepackInfo.pNext', c_loc(w4p), c_loc(w4p%pNext), c_sizeof(w4p%pNext))
  call field('BkW4A16GptqRepackInfo.zeros', c_loc(w4p), c_loc(w4p%zeros), c_sizeof(w4p%zeros))
  call field('BkW4A16GptqRepackInfo.groupSize', c_loc(w4p), c_loc(w4p%groupSize), &
       c_sizeof(w4p%groupSize))
  call field('BkW4A16GptqRepackInfo.qweight', c_loc(w4p), c_loc(w4p%qweight), c_sizeof(w4p%qweight))
  call field('BkW4A16GptqRepackInfo.scales', c_loc(w4p), c_loc(w4p%scales), c_sizeof(w4p%scales))
  call field('BkW4A16GptqRepackInfo.qzeros', c_loc(w4p), c_loc(w4p%qzeros), c_sizeof(w4p%qzeros))
  call field('BkW4A16GptqRepackInfo.gIdx', c_loc(w4p), c_loc(w4p%gIdx), c_sizeof(w4p%gIdx))
  call field('BkW4A16GptqRepackInfo.packed', c_loc(w4p), c_loc(w4p%packed), c_sizeof(w4p%packed))
  call field('BkW4A16GptqRepackInfo.packedScales', c_loc(w4p), c_loc(w4p%packedScales), &
       c_sizeof(w4p%packedScales))
  call field('BkW4A16GptqRepackInfo.perm', c_loc(w4p), c_loc(w4p%perm), c_sizeof(w4p%perm))

  call size_of('BkW4A16GemmInfo', c_sizeof(w4g))
  call field('BkW4A16GemmInfo.sType', c_loc(w4g), c_loc(w4g%sType), c_sizeof(w4g%sType))
  call field('BkW4A16GemmInfo.pNext', c_loc(w4g), c_loc(w4g%pNext), c_sizeof(w4g%pNext))
  call field('BkW4A16GemmInfo.flags', c_loc(w4g), c_loc(w4g%flags), c_sizeof(w4g%flags))
  call field('BkW4A16GemmInfo.groupSize', c_loc(w4g), c_loc(w4g%groupSize), c_sizeof(w4g%groupSize))
  call field('BkW4A16GemmInfo.a', c_loc(w4g), c_loc(w4g%a), c_sizeof(w4g%a))
  call field('BkW4A16GemmInfo.packed', c_loc(w4g), c_loc(w4g%packed), c_sizeof(w4g%packed))
  call field('BkW4A16GemmInfo.packedScales', c_loc(w4g), c_loc(w4g%packedScales), &
       c_sizeof(w4g%packedScales))
  call field('BkW4A16GemmInfo.perm', c_loc(w4g), c_loc(w4g%perm), c_sizeof(w4g%perm))
  call field('BkW4A16GemmInfo.c', c_loc(w4g), c_loc(w4g%c), c_sizeof(w4g%c))

  call size_of('BkAttentionPattern', c_sizeof(atp))
  call field('BkAttentionPattern.form', c_loc(atp), c_loc(atp%form), c_sizeof(atp%form))
  call field('BkAttentionPattern.blockQ', c_loc(atp), c_loc(atp%blockQ), c_sizeof(atp%blockQ))
  call field('BkAttentionPattern.blockK', c_loc(atp), c_loc(atp%blockK), c_sizeof(atp%blockK))
  call field('BkAttentionPattern.reserved', c_loc(atp), c_loc(atp%reserved), c_sizeof(atp%reserved))
  call field('BkAttentionPattern.mask', c_loc(atp), c_loc(atp%mask), c_sizeof(atp%mask))
  call field('BkAttentionPattern.counts', c_loc(atp), c_loc(atp%counts), c_sizeof(atp%counts))
  call field('BkAttentionPattern.indices', c_loc(atp), c_loc(atp%indices), c_sizeof(atp%indices))

  call size_of('BkAttentionInfo', c_sizeof(ati))
  call field('BkAttentionInfo.sType', c_loc(ati), c_loc(ati%sType), c_sizeof(ati%sType))
  call field('BkAttentionInfo.pNext', c_loc(ati), c_loc(ati%pNext), c_sizeof(ati%pNext))
  call field('BkAttentionInfo.flags', c_loc(ati), c_loc(ati%flags), c_sizeof(ati%flags))
  call field('BkAttentionInfo.reserved', c_loc(ati), c_loc(ati%reserved), c_sizeof(ati%reserved))
  call field('BkAttentionInfo.scale', c_loc(ati), c_loc(ati%scale), c_sizeof(ati%scale))
  call field('BkAttentionInfo.pattern', c_loc(ati), c_loc(ati%pattern), c_sizeof(ati%pattern))
  call field('BkAttentionInfo.q', c_loc(ati), c_loc(ati%q), c_sizeof(ati%q))
  call field('BkAttentionInfo.k', c_loc(ati), c_loc(ati%k), c_sizeof(ati%k))
  call field('BkAttentionInfo.v', c_loc(ati), c_loc(ati%v), c_sizeof(ati%v))
  call field('BkAttentionInfo.y', c_loc(ati), c_loc(ati%y), c_sizeof(ati%y))
  call field('BkAttentionInfo.lse', c_loc(ati), c_loc(ati%lse), c_sizeof(ati%lse))

  call size_of('BkAttentionBackwardInfo', c_sizeof(atb))
  call field('BkAttentionBackwardInfo.sType', c_loc(atb), c_loc(atb%sType), c_sizeof(atb%sType))
  call field('BkAttentionBackwardInfo.pNext', c_loc(atb), c_loc(atb%pNext), c_sizeof(atb%pNext))
  call field('BkAttentionBackwardInfo.flags', c_loc(atb), c_loc(atb%flags), c_sizeof(atb%flags))
  call field('BkAttentionBackwardInfo.reserved', c_loc(atb), c_loc(atb%reserved), &
       c_sizeof(atb%reserved))
  call field('BkAttentionBackwardInfo.scale', c_loc(atb), c_loc(atb%scale), c_sizeof(atb%scale))
  call field('BkAttentionBackwardInfo.pattern', c_loc(atb), c_loc(atb%pattern), &
       c_sizeof(atb%pattern))
  call field('BkAttentionBackwardInfo.q', c_loc(atb), c_loc(atb%q), c_sizeof(atb%q))
  call field('BkAttentionBackwardInfo.k', c_loc(atb), c_loc(atb%k), c_sizeof(atb%k))
  call field('BkAttentionBackwardInfo.v', c_loc(atb), c_loc(atb%v), c_sizeof(atb%v))
  call field('BkAttentionBackwardInfo.y', c_loc(atb), c_loc(atb%y), c_sizeof(atb%y))
  call field('BkAttentionBackwardInfo.lse', c_loc(atb), c_loc(atb%lse), c_sizeof(atb%lse))
  call field('BkAttentionBackwardInfo.dy', c_loc(atb), c_loc(atb%dy), c_sizeof(atb%dy))
  call field('BkAttentionBackwardInfo.dq', c_loc(atb), c_loc(atb%dq), c_sizeof(atb%dq))
  call field('BkAttentionBackwardInfo.dk', c_loc(atb), c_loc(atb%dk), c_sizeof(atb%dk))
  call field('BkAttentionBackwardInfo.dv', c_loc(atb), c_loc(atb%dv), c_sizeof(atb%dv))

  call const('BK_VERSION_MAJOR', int(BK_VERSION_MAJOR, 8))
  call const('BK_VERSION_MINOR', int(BK_VERSION_MINOR, 8))
  call const('BK_VERSION_PATCH', int(BK_VERSION_PATCH, 8))
  call const('BK_HEADER_VERSION', int(BK_HEADER_VERSION, 8))
  call const('BK_MAX_TENSOR_RANK', int(BK_MAX_TENSOR_RANK, 8))
  call const('BK_MAX_NAME_SIZE', int(BK_MAX_NAME_SIZE, 8))
  call const('BK_MAX_KERNEL_NAME_SIZE', int(BK_MAX_KERNEL_NAME_SIZE, 8))
  call const('BK_MAX_MODULE_ARCHITECTURES', int(BK_MAX_MODULE_ARCHITECTURES, 8))
  call const('BK_MAX_BINDINGS', int(BK_MAX_BINDINGS, 8))
  call const('BK_MAX_BINDING_NAME_SIZE', int(BK_MAX_BINDING_NAME_SIZE, 8))
  call const('BK_TRUE', int(BK_TRUE, 8))
  call const('BK_FALSE', int(BK_FALSE, 8))

  call const('BK_SUCCESS', int(BK_SUCCESS, 8))
  call const('BK_INCOMPLETE', int(BK_INCOMPLETE, 8))
  call const('BK_ERROR_INVALID_ARGUMENT', int(BK_ERROR_INVALID_ARGUMENT, 8))
  call const('BK_ERROR_UNSUPPORTED', int(BK_ERROR_UNSUPPORTED, 8))
  call const('BK_ERROR_MISALIGNED_OPERAND', int(BK_ERROR_MISALIGNED_OPERAND, 8))
  call const('BK_ERROR_WORKSPACE_TOO_SMALL', int(BK_ERROR_WORKSPACE_TOO_SMALL, 8))
  call const('BK_ERROR_BUFFER_TOO_SMALL', int(BK_ERROR_BUFFER_TOO_SMALL, 8))
  call const('BK_ERROR_OUT_OF_HOST_MEMORY', int(BK_ERROR_OUT_OF_HOST_MEMORY, 8))
  call const('BK_ERROR_OUT_OF_DEVICE_MEMORY', int(BK_ERROR_OUT_OF_DEVICE_MEMORY, 8))
  call const('BK_ERROR_DRIVER_NOT_FOUND', int(BK_ERROR_DRIVER_NOT_FOUND, 8))
  call const('BK_ERROR_NO_DEVICE', int(BK_ERROR_NO_DEVICE, 8))
  call const('BK_ERROR_DEVICE_LOST', int(BK_ERROR_DEVICE_LOST, 8))
  call const('BK_ERROR_MODULE_LOAD_FAILED', int(BK_ERROR_MODULE_LOAD_FAILED, 8))
  call const('BK_ERROR_INCOMPATIBLE_VERSION', int(BK_ERROR_INCOMPATIBLE_VERSION, 8))
  call const('BK_ERROR_INVALID_STATE', int(BK_ERROR_INVALID_STATE, 8))
  call const('BK_RESULT_MAX_ENUM', int(BK_RESULT_MAX_ENUM, 8))

  call const('BK_STRUCTURE_TYPE_UNDEFINED', int(BK_STRUCTURE_TYPE_UNDEFINED, 8))
  call const('BK_STRUCTURE_TYPE_DEVICE_PROPERTIES', int(BK_STRUCTURE_TYPE_DEVICE_PROPERTIES, 8))
  call const('BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO', &
       int(BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO, 8))
  call const('BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO', &
       int(BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, 8))
  call const('BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO', &
       int(BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, 8))
  call const('BK_STRUCTURE_TYPE_PLAN_CREATE_INFO', int(BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, 8))
  call const('BK_STRUCTURE_TYPE_PLAN_PROPERTIES', int(BK_STRUCTURE_TYPE_PLAN_PROPERTIES, 8))
  call const('BK_STRUCTURE_TYPE_RUN_INFO', int(BK_STRUCTURE_TYPE_RUN_INFO, 8))
  call const('BK_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES', &
       int(BK_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES, 8))
  call const('BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES', &
       int(BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES, 8))
  call const('BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO', &
       int(BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO, 8))
  call const('BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO', &
       int(BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO, 8))
  call const('BK_STRUCTURE_TYPE_GEMM_INFO', int(BK_STRUCTURE_TYPE_GEMM_INFO, 8))
  call const('BK_STRUCTURE_TYPE_SPARSE24_CONVERT_INFO', &
       int(BK_STRUCTURE_TYPE_SPARSE24_CONVERT_INFO, 8))
  call const('BK_STRUCTURE_TYPE_SPARSE24_PREPARE_INFO', &
       int(BK_STRUCTURE_TYPE_SPARSE24_PREPARE_INFO, 8))
  call const('BK_STRUCTURE_TYPE_SPARSE24_GEMM_INFO', int(BK_STRUCTURE_TYPE_SPARSE24_GEMM_INFO, 8))
  call const('BK_STRUCTURE_TYPE_W4A16_CONVERT_INFO', int(BK_STRUCTURE_TYPE_W4A16_CONVERT_INFO, 8))
  call const('BK_STRUCTURE_TYPE_W4A16_GPTQ_REPACK_INFO', &
       int(BK_STRUCTURE_TYPE_W4A16_GPTQ_REPACK_INFO, 8))
  call const('BK_STRUCTURE_TYPE_W4A16_GEMM_INFO', int(BK_STRUCTURE_TYPE_W4A16_GEMM_INFO, 8))
  call const('BK_STRUCTURE_TYPE_ATTENTION_INFO', int(BK_STRUCTURE_TYPE_ATTENTION_INFO, 8))
  call const('BK_STRUCTURE_TYPE_ATTENTION_BACKWARD_INFO', &
       int(BK_STRUCTURE_TYPE_ATTENTION_BACKWARD_INFO, 8))
  call const('BK_STRUCTURE_TYPE_MAX_ENUM', int(BK_STRUCTURE_TYPE_MAX_ENUM, 8))

  call const('BK_DATA_TYPE_UNDEFINED', int(BK_DATA_TYPE_UNDEFINED, 8))
  call const('BK_DATA_TYPE_F32', int(BK_DATA_TYPE_F32, 8))
  call const('BK_DATA_TYPE_F16', int(BK_DATA_TYPE_F16, 8))
  call const('BK_DATA_TYPE_BF16', int(BK_DATA_TYPE_BF16, 8))
  call const('BK_DATA_TYPE_F64', int(BK_DATA_TYPE_F64, 8))
  call const('BK_DATA_TYPE_I32', int(BK_DATA_TYPE_I32, 8))
  call const('BK_DATA_TYPE_U16', int(BK_DATA_TYPE_U16, 8))
  call const('BK_DATA_TYPE_U8', int(BK_DATA_TYPE_U8, 8))
  call const('BK_DATA_TYPE_I8', int(BK_DATA_TYPE_I8, 8))
  call const('BK_DATA_TYPE_U32', int(BK_DATA_TYPE_U32, 8))
  call const('BK_DATA_TYPE_TF32', int(BK_DATA_TYPE_TF32, 8))
  call const('BK_DATA_TYPE_MAX_ENUM', int(BK_DATA_TYPE_MAX_ENUM, 8))

  call const('BK_DEVICE_TYPE_AUTO', int(BK_DEVICE_TYPE_AUTO, 8))
  call const('BK_DEVICE_TYPE_HOST', int(BK_DEVICE_TYPE_HOST, 8))
  call const('BK_DEVICE_TYPE_CUDA', int(BK_DEVICE_TYPE_CUDA, 8))
  call const('BK_DEVICE_TYPE_MAX_ENUM', int(BK_DEVICE_TYPE_MAX_ENUM, 8))

  call const('BK_MEMORY_TYPE_DEVICE', int(BK_MEMORY_TYPE_DEVICE, 8))
  call const('BK_MEMORY_TYPE_HOST_PINNED', int(BK_MEMORY_TYPE_HOST_PINNED, 8))
  call const('BK_MEMORY_TYPE_MAX_ENUM', int(BK_MEMORY_TYPE_MAX_ENUM, 8))

  call const('BK_COMMAND_BUFFER_USAGE_ONE_TIME', int(BK_COMMAND_BUFFER_USAGE_ONE_TIME, 8))
  call const('BK_COMMAND_BUFFER_USAGE_REUSABLE', int(BK_COMMAND_BUFFER_USAGE_REUSABLE, 8))
  call const('BK_COMMAND_BUFFER_USAGE_MAX_ENUM', int(BK_COMMAND_BUFFER_USAGE_MAX_ENUM, 8))

  call const('BK_GATED_ACTIVATION_GLU', int(BK_GATED_ACTIVATION_GLU, 8))
  call const('BK_GATED_ACTIVATION_REGLU', int(BK_GATED_ACTIVATION_REGLU, 8))
  call const('BK_GATED_ACTIVATION_SWIGLU', int(BK_GATED_ACTIVATION_SWIGLU, 8))
  call const('BK_GATED_ACTIVATION_GEGLU', int(BK_GATED_ACTIVATION_GEGLU, 8))
  call const('BK_GATED_ACTIVATION_GEGLU_TANH', int(BK_GATED_ACTIVATION_GEGLU_TANH, 8))
  call const('BK_GATED_ACTIVATION_KIND_MAX_ENUM', int(BK_GATED_ACTIVATION_KIND_MAX_ENUM, 8))
  call const('BK_GATED_ACTIVATION_BINDING_INPUT', int(BK_GATED_ACTIVATION_BINDING_INPUT, 8))
  call const('BK_GATED_ACTIVATION_BINDING_OUTPUT', int(BK_GATED_ACTIVATION_BINDING_OUTPUT, 8))
  call const('BK_GATED_ACTIVATION_BACKWARD_BINDING_INPUT', &
       int(BK_GATED_ACTIVATION_BACKWARD_BINDING_INPUT, 8))
  call const('BK_GATED_ACTIVATION_BACKWARD_BINDING_GRAD_OUTPUT', &
       int(BK_GATED_ACTIVATION_BACKWARD_BINDING_GRAD_OUTPUT, 8))
  call const('BK_GATED_ACTIVATION_BACKWARD_BINDING_GRAD_INPUT', &
       int(BK_GATED_ACTIVATION_BACKWARD_BINDING_GRAD_INPUT, 8))

  call const('BK_GEMM_OP_N', int(BK_GEMM_OP_N, 8))
  call const('BK_GEMM_OP_T', int(BK_GEMM_OP_T, 8))
  call const('BK_GEMM_OP_MAX_ENUM', int(BK_GEMM_OP_MAX_ENUM, 8))

  call const('BK_GEMM_ACTIVATION_NONE', int(BK_GEMM_ACTIVATION_NONE, 8))
  call const('BK_GEMM_ACTIVATION_RELU', int(BK_GEMM_ACTIVATION_RELU, 8))
  call const('BK_GEMM_ACTIVATION_GELU_TANH', int(BK_GEMM_ACTIVATION_GELU_TANH, 8))
  call const('BK_GEMM_ACTIVATION_MAX_ENUM', int(BK_GEMM_ACTIVATION_MAX_ENUM, 8))

  call const('BK_GEMM_ALLOW_TF32_BIT', int(BK_GEMM_ALLOW_TF32_BIT, 8))
  call const('BK_GEMM_FLAG_BITS_MAX_ENUM', int(BK_GEMM_FLAG_BITS_MAX_ENUM, 8))

  call const('BK_GEMM_BINDING_A', int(BK_GEMM_BINDING_A, 8))
  call const('BK_GEMM_BINDING_B', int(BK_GEMM_BINDING_B, 8))
  call const('BK_GEMM_BINDING_C', int(BK_GEMM_BINDING_C, 8))
  call const('BK_GEMM_BINDING_D', int(BK_GEMM_BINDING_D, 8))
  call const('BK_GEMM_BINDING_BIAS', int(BK_GEMM_BINDING_BIAS, 8))

  call const('BK_SPARSE24_COMPRESS_STRICT', int(BK_SPARSE24_COMPRESS_STRICT, 8))
  call const('BK_SPARSE24_COMPRESS_PRUNE', int(BK_SPARSE24_COMPRESS_PRUNE, 8))
  call const('BK_SPARSE24_DECOMPRESS', int(BK_SPARSE24_DECOMPRESS, 8))
  call const('BK_SPARSE24_VALIDATE', int(BK_SPARSE24_VALIDATE, 8))
  call const('BK_SPARSE24_CONVERSION_MAX_ENUM', int(BK_SPARSE24_CONVERSION_MAX_ENUM, 8))

  call const('BK_SPARSE24_STATUS_OK', int(BK_SPARSE24_STATUS_OK, 8))
  call const('BK_SPARSE24_STATUS_TOO_MANY_NONZEROS', int(BK_SPARSE24_STATUS_TOO_MANY_NONZEROS, 8))
  call const('BK_SPARSE24_STATUS_BAD_METADATA', int(BK_SPARSE24_STATUS_BAD_METADATA, 8))
  call const('BK_SPARSE24_STATUS_MAX_ENUM', int(BK_SPARSE24_STATUS_MAX_ENUM, 8))

  call const('BK_SPARSE24_CONVERT_BINDING_DENSE', int(BK_SPARSE24_CONVERT_BINDING_DENSE, 8))
  call const('BK_SPARSE24_CONVERT_BINDING_VALUES', int(BK_SPARSE24_CONVERT_BINDING_VALUES, 8))
  call const('BK_SPARSE24_CONVERT_BINDING_METADATA', int(BK_SPARSE24_CONVERT_BINDING_METADATA, 8))
  call const('BK_SPARSE24_CONVERT_BINDING_REPORT', int(BK_SPARSE24_CONVERT_BINDING_REPORT, 8))

  call const('BK_SPARSE24_PREPARE_BINDING_VALUES', int(BK_SPARSE24_PREPARE_BINDING_VALUES, 8))
  call const('BK_SPARSE24_PREPARE_BINDING_METADATA', int(BK_SPARSE24_PREPARE_BINDING_METADATA, 8))
  call const('BK_SPARSE24_PREPARE_BINDING_PREPARED', int(BK_SPARSE24_PREPARE_BINDING_PREPARED, 8))

  call const('BK_SPARSE24_GEMM_BINDING_WEIGHT', int(BK_SPARSE24_GEMM_BINDING_WEIGHT, 8))
  call const('BK_SPARSE24_GEMM_BINDING_X', int(BK_SPARSE24_GEMM_BINDING_X, 8))
  call const('BK_SPARSE24_GEMM_BINDING_C', int(BK_SPARSE24_GEMM_BINDING_C, 8))
  call const('BK_SPARSE24_GEMM_BINDING_Y', int(BK_SPARSE24_GEMM_BINDING_Y, 8))
  call const('BK_SPARSE24_GEMM_BINDING_BIAS', int(BK_SPARSE24_GEMM_BINDING_BIAS, 8))

  call const('BK_W4A16_GROUP_PER_CHANNEL', int(BK_W4A16_GROUP_PER_CHANNEL, 8))

  call const('BK_W4A16_QUANTIZE', int(BK_W4A16_QUANTIZE, 8))
  call const('BK_W4A16_PACK', int(BK_W4A16_PACK, 8))
  call const('BK_W4A16_UNPACK', int(BK_W4A16_UNPACK, 8))
  call const('BK_W4A16_CONVERSION_MAX_ENUM', int(BK_W4A16_CONVERSION_MAX_ENUM, 8))

  call const('BK_W4A16_CONVERT_BINDING_WEIGHT', int(BK_W4A16_CONVERT_BINDING_WEIGHT, 8))
  call const('BK_W4A16_CONVERT_BINDING_QUANTIZED', int(BK_W4A16_CONVERT_BINDING_QUANTIZED, 8))
  call const('BK_W4A16_CONVERT_BINDING_SCALES', int(BK_W4A16_CONVERT_BINDING_SCALES, 8))
  call const('BK_W4A16_CONVERT_BINDING_PACKED', int(BK_W4A16_CONVERT_BINDING_PACKED, 8))
  call const('BK_W4A16_CONVERT_BINDING_PACKED_SCALES', &
       int(BK_W4A16_CONVERT_BINDING_PACKED_SCALES, 8))

  call const('BK_W4A16_GPTQ_ZEROS_EXACT', int(BK_W4A16_GPTQ_ZEROS_EXACT, 8))
  call const('BK_W4A16_GPTQ_ZEROS_MINUS_ONE', int(BK_W4A16_GPTQ_ZEROS_MINUS_ONE, 8))
  call const('BK_W4A16_GPTQ_ZEROS_MAX_ENUM', int(BK_W4A16_GPTQ_ZEROS_MAX_ENUM, 8))

  call const('BK_W4A16_REPACK_STATUS_OK', int(BK_W4A16_REPACK_STATUS_OK, 8))
  call const('BK_W4A16_REPACK_STATUS_ASYMMETRIC', int(BK_W4A16_REPACK_STATUS_ASYMMETRIC, 8))
  call const('BK_W4A16_REPACK_STATUS_BAD_GROUP_INDEX', &
       int(BK_W4A16_REPACK_STATUS_BAD_GROUP_INDEX, 8))
  call const('BK_W4A16_REPACK_STATUS_UNEVEN_GROUPS', int(BK_W4A16_REPACK_STATUS_UNEVEN_GROUPS, 8))
  call const('BK_W4A16_REPACK_STATUS_MAX_ENUM', int(BK_W4A16_REPACK_STATUS_MAX_ENUM, 8))

  call const('BK_W4A16_REPACK_BINDING_QWEIGHT', int(BK_W4A16_REPACK_BINDING_QWEIGHT, 8))
  call const('BK_W4A16_REPACK_BINDING_SCALES', int(BK_W4A16_REPACK_BINDING_SCALES, 8))
  call const('BK_W4A16_REPACK_BINDING_QZEROS', int(BK_W4A16_REPACK_BINDING_QZEROS, 8))
  call const('BK_W4A16_REPACK_BINDING_G_IDX', int(BK_W4A16_REPACK_BINDING_G_IDX, 8))
  call const('BK_W4A16_REPACK_BINDING_PACKED', int(BK_W4A16_REPACK_BINDING_PACKED, 8))
  call const('BK_W4A16_REPACK_BINDING_PACKED_SCALES', int(BK_W4A16_REPACK_BINDING_PACKED_SCALES, 8))
  call const('BK_W4A16_REPACK_BINDING_PERM', int(BK_W4A16_REPACK_BINDING_PERM, 8))
  call const('BK_W4A16_REPACK_BINDING_REPORT', int(BK_W4A16_REPACK_BINDING_REPORT, 8))

  call const('BK_W4A16_GEMM_BINDING_A', int(BK_W4A16_GEMM_BINDING_A, 8))
  call const('BK_W4A16_GEMM_BINDING_PACKED', int(BK_W4A16_GEMM_BINDING_PACKED, 8))
  call const('BK_W4A16_GEMM_BINDING_PACKED_SCALES', int(BK_W4A16_GEMM_BINDING_PACKED_SCALES, 8))
  call const('BK_W4A16_GEMM_BINDING_PERM', int(BK_W4A16_GEMM_BINDING_PERM, 8))
  call const('BK_W4A16_GEMM_BINDING_C', int(BK_W4A16_GEMM_BINDING_C, 8))

  call const('BK_ATTENTION_CAUSAL_BIT', int(BK_ATTENTION_CAUSAL_BIT, 8))
  call const('BK_ATTENTION_ALLOW_ATOMICS_BIT', int(BK_ATTENTION_ALLOW_ATOMICS_BIT, 8))
  call const('BK_ATTENTION_FLAG_BITS_MAX_ENUM', int(BK_ATTENTION_FLAG_BITS_MAX_ENUM, 8))

  call const('BK_ATTENTION_PATTERN_DENSE', int(BK_ATTENTION_PATTERN_DENSE, 8))
  call const('BK_ATTENTION_PATTERN_MASK', int(BK_ATTENTION_PATTERN_MASK, 8))
  call const('BK_ATTENTION_PATTERN_LIST', int(BK_ATTENTION_PATTERN_LIST, 8))
  call const('BK_ATTENTION_PATTERN_FORM_MAX_ENUM', int(BK_ATTENTION_PATTERN_FORM_MAX_ENUM, 8))

  call const('BK_ATTENTION_BINDING_Q', int(BK_ATTENTION_BINDING_Q, 8))
  call const('BK_ATTENTION_BINDING_K', int(BK_ATTENTION_BINDING_K, 8))
  call const('BK_ATTENTION_BINDING_V', int(BK_ATTENTION_BINDING_V, 8))
  call const('BK_ATTENTION_BINDING_MASK', int(BK_ATTENTION_BINDING_MASK, 8))
  call const('BK_ATTENTION_BINDING_COUNTS', int(BK_ATTENTION_BINDING_COUNTS, 8))
  call const('BK_ATTENTION_BINDING_INDICES', int(BK_ATTENTION_BINDING_INDICES, 8))
  call const('BK_ATTENTION_BINDING_Y', int(BK_ATTENTION_BINDING_Y, 8))
  call const('BK_ATTENTION_BINDING_LSE', int(BK_ATTENTION_BINDING_LSE, 8))

  call const('BK_ATTENTION_BACKWARD_BINDING_Q', int(BK_ATTENTION_BACKWARD_BINDING_Q, 8))
  call const('BK_ATTENTION_BACKWARD_BINDING_K', int(BK_ATTENTION_BACKWARD_BINDING_K, 8))
  call const('BK_ATTENTION_BACKWARD_BINDING_V', int(BK_ATTENTION_BACKWARD_BINDING_V, 8))
  call const('BK_ATTENTION_BACKWARD_BINDING_MASK', int(BK_ATTENTION_BACKWARD_BINDING_MASK, 8))
  call const('BK_ATTENTION_BACKWARD_BINDING_COUNTS', int(BK_ATTENTION_BACKWARD_BINDING_COUNTS, 8))
  call const('BK_ATTENTION_BACKWARD_BINDING_INDICES', int(BK_ATTENTION_BACKWARD_BINDING_INDICES, 8))
  call const('BK_ATTENTION_BACKWARD_BINDING_Y', int(BK_ATTENTION_BACKWARD_BINDING_Y, 8))
  call const('BK_ATTENTION_BACKWARD_BINDING_LSE', int(BK_ATTENTION_BACKWARD_BINDING_LSE, 8))
  call const('BK_ATTENTION_BACKWARD_BINDING_DY', int(BK_ATTENTION_BACKWARD_BINDING_DY, 8))
  call const('BK_ATTENTION_BACKWARD_BINDING_DQ', int(BK_ATTENTION_BACKWARD_BINDING_DQ, 8))
  call const('BK_ATTENTION_BACKWARD_BINDING_DK', int(BK_ATTENTION_BACKWARD_BINDING_DK, 8))
  call const('BK_ATTENTION_BACKWARD_BINDING_DV', int(BK_ATTENTION_BACKWARD_BINDING_DV, 8))

  ! The version functions return C's uint32_t bits in an integer(c_int32_t).
  call macro('BK_MAKE_VERSION(1023,1023,4095)', BK_MAKE_VERSION(1023, 1023, 4095))
  call macro('BK_VERSION_GET_MAJOR(BK_MAKE_VERSION(1022,5,6))', &
       BK_VERSION_GET_MAJOR(BK_MAKE_VERSION(1022, 5, 6)))
  call macro('BK_VERSION_GET_MINOR(BK_MAKE_VERSION(1,1021,6))', &
       BK_VERSION_GET_MINOR(BK_MAKE_VERSION(1, 1021, 6)))
  call macro('BK_VERSION_GET_PATCH(BK_MAKE_VERSION(1,2,4093))', &
       BK_VERSION_GET_PATCH(BK_MAKE_VERSION(1, 2, 4093)))

contains

  subroutine size_of(name, bytes)
    character(len=*), intent(in) :: name
    integer(c_size_t), intent(in) :: bytes
    write (*, '(a, 1x, a, 1x, i0)') 'size', name, bytes
  end subroutine size_of

  subroutine field(name, base_ptr, field_ptr, bytes)
    character(len=*), intent(in) :: name
    type(c_ptr), intent(in) :: base_ptr, field_ptr
    integer(c_size_t), intent(in) :: bytes
    integer(c_intptr_t) :: offset
    offset = transfer(field_ptr, 0_c_intptr_t) - transfer(base_ptr, 0_c_intptr_t)
    write (*, '(a, 1x, a, 1x, i0, 1x, i0)') 'field', name, offset, bytes
  end subroutine field

  subroutine const(name, value)
    character(len=*), intent(in) :: name
    integer(8), intent(in) :: value
    write (*, '(a, 1x, a, 1x, i0)') 'const', name, value
  end subroutine const

  subroutine macro(name, value)
    character(len=*), intent(in) :: name
    integer(c_int32_t), intent(in) :: value
    write (*, '(a, 1x, a, 1x, i0)') 'macro', name, iand(int(value, 8), int(z'FFFFFFFF', 8))
  end subroutine macro
end program fortran_layout_f
