/* SPDX-License-Identifier: Apache-2.0 */
/* Gated activations: y = a * gate(b), where (a, b) are the two halves of
 * the input along splitAxis. See bk-gated-activation(7). */
#ifndef BK_GATED_ACTIVATION_H
#define BK_GATED_ACTIVATION_H

#include <bk/bk_core.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum BkGatedActivationKind {
    BK_GATED_ACTIVATION_GLU = 0,        /* a * sigmoid(b) */
    BK_GATED_ACTIVATION_REGLU = 1,      /* a * max(b, 0) */
    BK_GATED_ACTIVATION_SWIGLU = 2,     /* a * b * sigmoid(b) */
    BK_GATED_ACTIVATION_GEGLU = 3,      /* a * b * Phi(b), Phi the normal CDF (erf form) */
    BK_GATED_ACTIVATION_GEGLU_TANH = 4, /* a * gelu_tanh(b), the tanh approximation */
    BK_GATED_ACTIVATION_KIND_MAX_ENUM = 0x7FFFFFFF
} BkGatedActivationKind;

/* Forward. Binding slots: 0 = input, 1 = output.
 * input has extent 2n along splitAxis, output n and the same elsewhere. */
typedef struct BkGatedActivationInfo {
    BkStructureType sType;              /* BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO */
    const void *pNext;
    BkGatedActivationKind kind;
    uint32_t splitAxis;                 /* row-major axis index, < rank */
    BkTensorDesc input;
    BkTensorDesc output;
} BkGatedActivationInfo;

/* Backward. Binding slots: 0 = input (the saved forward input x),
 * 1 = gradOutput (dy, the output's shape), 2 = gradInput (dx, x's shape). */
typedef struct BkGatedActivationBackwardInfo {
    BkStructureType sType;              /* BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO */
    const void *pNext;
    BkGatedActivationKind kind;
    uint32_t splitAxis;
    BkTensorDesc input;
    BkTensorDesc gradOutput;
    BkTensorDesc gradInput;
} BkGatedActivationBackwardInfo;

enum {
    BK_GATED_ACTIVATION_BINDING_INPUT = 0,
    BK_GATED_ACTIVATION_BINDING_OUTPUT = 1,
    BK_GATED_ACTIVATION_BACKWARD_BINDING_INPUT = 0,
    BK_GATED_ACTIVATION_BACKWARD_BINDING_GRAD_OUTPUT = 1,
    BK_GATED_ACTIVATION_BACKWARD_BINDING_GRAD_INPUT = 2
};

#ifdef __cplusplus
}
#endif
#endif /* BK_GATED_ACTIVATION_H */
