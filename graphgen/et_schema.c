/*
 * et_schema.c — what PyTorch's ExecutionTraceObserver records for each
 * aten op that graphgen emits: the op's schema string (as the observer
 * prints it: enum defaults as integers, `reduction=1`) and how the op's
 * arguments line up with the tensors a dc_op holds.
 *
 * A dc_op lists only tensors; a recorded op lists every argument of its
 * schema, scalars included, TensorLists nested as one GenericList. The
 * `args` string says, argument by argument, where each comes from; the
 * exporter (export_et.c) reads it and falls back to "no schema, tensors
 * as they are" when the op's tensors do not fit it, so a table entry can
 * never misplace a tensor. Tokens, separated by one space:
 *
 *   t        the next input tensor
 *   t?       the next input tensor, or None when there is none left
 *   T        the next input tensor as its transposed view (`.t()`: its
 *            own tensor id, the base's storage, last two dims and
 *            strides swapped) — addmm's mat2 is the weight's view
 *   L        the remaining inputs as one GenericList[Tensor, ...]
 *   uL       the same, led by an undefined tensor (Tensor?[] indices of
 *            `z[:, li, lj]`: the first dim is not indexed)
 *   nL2      GenericList[None, the next two inputs] (_index_put_impl_)
 *   E O      the remaining inputs taken alternately: E the even ones, O
 *            the odd ones, each one GenericList (_foreach_*_.List)
 *   i=N d=X b=0|1 none    Int, Double, Bool, None
 *   dev      Device of output 0     dtype   its ScalarType, an Int
 *   size     output 0's shape as GenericList[Int, ...]
 *   ints=a;b GenericList[Int, ...] as written (ints= : empty)
 *   catdim   Int: the dim where output 0 and input 0 differ
 *   trdims   Int, Int: the last two dims of input 0
 *   narrow   Int dim, Int start, Int length of a narrow of input 0
 *
 * The schema strings are copied from torch 2.14's traces
 * (tests/fixtures/torchrec, tests/fixtures/traces) where those hold the
 * op; mse_loss(_backward), zeros and _foreach_add_.List follow
 * native_functions.yaml printed the same way. Ops not listed here
 * (record_function scopes, autograd nodes, LookupFunction, fbgemm and
 * fused ops whose argument list dlrmc does not model) keep an empty
 * op_schema, as PyTorch writes for record_function scopes.
 */
#include <string.h>

#include "graphgen/graphgen_int.h"

static const gg_et_sig sigs[] = {
    {"aten::_foreach_add_",
     "aten::_foreach_add_.List(Tensor(a!)[] self, Tensor[] other, *, "
     "Scalar alpha=1) -> ()",
     "E O d=-0.01"}, /* alpha = -lr; the study has no learning rate:
                          DLRM's default 0.01 */
    {"aten::_index_put_impl_",
     "aten::_index_put_impl_(Tensor(a!) self, Tensor?[] indices, Tensor "
     "values, bool accumulate=False, bool unsafe=False) -> Tensor(a!)",
     "t nL2 t b=1 b=1"},
    {"aten::add",
     "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> "
     "Tensor",
     "t t i=1"},
    {"aten::add_",
     "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) "
     "-> Tensor(a!)",
     "t t i=1"},
    {"aten::addmm",
     "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, "
     "Scalar alpha=1) -> Tensor",
     "t t T i=1 i=1"},
    {"aten::binary_cross_entropy",
     "aten::binary_cross_entropy(Tensor self, Tensor target, Tensor? "
     "weight=None, int reduction=1) -> Tensor",
     "t t none i=1"},
    {"aten::binary_cross_entropy_backward",
     "aten::binary_cross_entropy_backward(Tensor grad_output, Tensor self, "
     "Tensor target, Tensor? weight=None, int reduction=1) -> Tensor",
     "t t t none i=1"},
    {"aten::binary_cross_entropy_with_logits",
     "aten::binary_cross_entropy_with_logits(Tensor self, Tensor target, "
     "Tensor? weight=None, Tensor? pos_weight=None, int reduction=1) -> "
     "Tensor",
     "t t none none i=1"},
    {"aten::bmm", "aten::bmm(Tensor self, Tensor mat2) -> Tensor", "t t"},
    {"aten::broadcast_tensors",
     "aten::broadcast_tensors(Tensor[] tensors) -> Tensor[]", "L"},
    {"aten::cat", "aten::cat(Tensor[] tensors, int dim=0) -> Tensor",
     "L catdim"},
    {"aten::detach", "aten::detach(Tensor(a) self) -> Tensor(a)", "t"},
    {"aten::detach_", "aten::detach_(Tensor(a!) self) -> Tensor(a!)", "t"},
    {"aten::div_",
     "aten::div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
     "t t"},
    {"aten::empty",
     "aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, "
     "Layout? layout=None, Device? device=None, bool? pin_memory=None, "
     "MemoryFormat? memory_format=None) -> Tensor",
     "size dtype i=0 dev b=0 none"},
    {"aten::index",
     "aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor", "t uL"},
    {"aten::lift_fresh", "aten::lift_fresh(Tensor(a) self) -> Tensor(a)",
     "t"},
    {"aten::linear",
     "aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> "
     "Tensor",
     "t t t?"},
    {"aten::matmul", "aten::matmul(Tensor self, Tensor other) -> Tensor",
     "t t"},
    {"aten::mm", "aten::mm(Tensor self, Tensor mat2) -> Tensor", "t t"},
    {"aten::mse_loss",
     "aten::mse_loss(Tensor self, Tensor target, int reduction=1) -> "
     "Tensor",
     "t t i=1"},
    {"aten::mse_loss_backward",
     "aten::mse_loss_backward(Tensor grad_output, Tensor self, Tensor "
     "target, int reduction) -> Tensor",
     "t t t i=1"},
    {"aten::mul",
     "aten::mul.Tensor(Tensor self, Tensor other) -> Tensor", "t t"},
    {"aten::mul_",
     "aten::mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
     "t t"},
    {"aten::narrow",
     "aten::narrow(Tensor(a) self, int dim, SymInt start, SymInt length) "
     "-> Tensor(a)",
     "t narrow"},
    {"aten::new_zeros",
     "aten::new_zeros(Tensor self, SymInt[] size, *, ScalarType? "
     "dtype=None, Layout? layout=None, Device? device=None, bool? "
     "pin_memory=None) -> Tensor",
     "t size dtype i=0 dev none"},
    {"aten::ones_like",
     "aten::ones_like(Tensor self, *, ScalarType? dtype=None, Layout? "
     "layout=None, Device? device=None, bool? pin_memory=None, "
     "MemoryFormat? memory_format=None) -> Tensor",
     "t none none none b=0 i=1"},
    {"aten::relu", "aten::relu(Tensor self) -> Tensor", "t"},
    {"aten::reshape",
     "aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)",
     "t size"},
    {"aten::sigmoid", "aten::sigmoid(Tensor self) -> Tensor", "t"},
    {"aten::sigmoid_backward",
     "aten::sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor",
     "t t"},
    {"aten::slice",
     "aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, "
     "SymInt? end=None, SymInt step=1) -> Tensor(a)",
     "t i=0 i=0 i=9223372036854775807 i=1"},
    {"aten::slice_backward",
     "aten::slice_backward(Tensor grad_output, SymInt[] input_sizes, int "
     "dim, SymInt start, SymInt end, SymInt step) -> Tensor",
     "t size i=0 i=0 i=9223372036854775807 i=1"},
    {"aten::sqrt", "aten::sqrt(Tensor self) -> Tensor", "t"},
    {"aten::sum",
     "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, "
     "*, ScalarType? dtype=None) -> Tensor",
     "t ints=0 b=0 none"},
    {"aten::t", "aten::t(Tensor(a) self) -> Tensor(a)", "t"},
    {"aten::threshold_backward",
     "aten::threshold_backward(Tensor grad_output, Tensor self, Scalar "
     "threshold) -> Tensor",
     "t t i=0"},
    {"aten::to",
     "aten::to.device(Tensor(a) self, Device device, ScalarType dtype, "
     "bool non_blocking=False, bool copy=False, MemoryFormat? "
     "memory_format=None) -> Tensor(a)",
     "t dev dtype b=0 b=0 none"},
    {"aten::transpose",
     "aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
     "t trdims"},
    {"aten::view", "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
     "t size"},
    {"aten::zero_", "aten::zero_(Tensor(a!) self) -> Tensor(a!)", "t"},
    {"aten::zeros",
     "aten::zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? "
     "layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
     "ints= none none none none"},
};

const gg_et_sig *gg_et_sig_find(const char *name) {
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    if (strcmp(name, sigs[i].name) == 0) return &sigs[i];
  return NULL;
}
