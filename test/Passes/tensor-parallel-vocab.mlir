// RUN: nncc-opt %s -split-input-file -nncc-tensor-parallel="tensor-parallel=2" -verify-diagnostics | FileCheck %s

// A vocab-parallel embedding (Megatron's VocabParallelEmbedding): the table
// global is cut in rows (rank t holds rows [4t, 4t + 4)), the rank's index t
// is a layout state sharded in parts of one element (whole [0, 1]), and each
// rank looks up its ids shifted by 4t and clamped into its rows, zeroes the
// rows of the ids outside them, and one sum over the tensor group makes the
// embedding whole.
// CHECK: module attributes {nncc.parallel = array<i64: 1, 2, 1>}
// CHECK-DAG: ml_program.global private mutable @nncc.layout.tensor_rank(dense<[0, 1]> : tensor<2xi64>) : tensor<1xi64> {nncc.shard = array<i64: 0, 2>}
// CHECK-DAG: ml_program.global private mutable @emb(dense<{{.*}}> : tensor<8x4xf32>) : tensor<4x4xf32> {nncc.shard = array<i64: 0, 2>}
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[IDS:.*]]: tensor<2x3xi64>)
// CHECK-DAG: %[[TABLE:.*]] = ml_program.global_load @emb : tensor<4x4xf32>
// CHECK-DAG: %[[RANK1:.*]] = ml_program.global_load @nncc.layout.tensor_rank : tensor<1xi64>
// CHECK-DAG: %[[RANK:.*]] = nn.reshape %[[RANK1]] : (tensor<1xi64>) -> tensor<i64>
// CHECK-DAG: %[[ZERO:.*]] = nn.constant dense<0> : tensor<i64>
// CHECK-DAG: %[[V:.*]] = nn.constant dense<8> : tensor<i64>
// CHECK-DAG: %[[NEG:.*]] = nn.less %[[IDS]], %[[ZERO]]
// CHECK-DAG: %[[UP:.*]] = nn.add %[[IDS]], %[[V]]
// CHECK: %[[WRAPPED:.*]] = nn.where %[[NEG]], %[[UP]], %[[IDS]]
// CHECK-DAG: %[[ROWS:.*]] = nn.constant dense<4> : tensor<i64>
// CHECK: %[[OFFSET:.*]] = nn.mul %[[RANK]], %[[ROWS]] : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK: %[[LOCAL:.*]] = nn.sub %[[WRAPPED]], %[[OFFSET]] : (tensor<2x3xi64>, tensor<i64>) -> tensor<2x3xi64>
// CHECK-DAG: %[[LAST:.*]] = nn.constant dense<3> : tensor<i64>
// CHECK: %[[CLAMPED:.*]] = nn.clip %[[LOCAL]], %{{.*}}, %[[LAST]]
// CHECK: %[[MINE:.*]] = nn.equal %[[CLAMPED]], %[[LOCAL]] : (tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xi1>
// CHECK: %[[FOUND:.*]] = nn.gather %[[TABLE]], %[[CLAMPED]] {axis = 0 : i64} : (tensor<4x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
// CHECK: %[[MASK:.*]] = nn.reshape %[[MINE]] : (tensor<2x3xi1>) -> tensor<2x3x1xi1>
// CHECK: %[[MASKED:.*]] = nn.where %[[MASK]], %[[FOUND]], %{{.*}} : (tensor<2x3x1xi1>, tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x3x4xf32>
// CHECK: %[[SUM:.*]] = dist.all_reduce %[[MASKED]] {group = "tensor", group_size = 2 : i64, reduction = "sum"} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK: %[[Y:.*]] = nn.relu %[[SUM]]
// CHECK: return %[[Y]]
module {
  ml_program.global private mutable @emb(dense<1.0> : tensor<8x4xf32>) : tensor<8x4xf32>
  func.func @forward(%ids: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
    %t = ml_program.global_load @emb : tensor<8x4xf32>
    %e = nn.gather %t, %ids {axis = 0 : i64} : (tensor<8x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
    %y = nn.relu %e : tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
}

// -----

// An inference constant table by int32 ids: it becomes a sharded global
// like a cut constant weight, and the rank's index is cast to the ids' type.
// CHECK-DAG: ml_program.global private mutable @tok(dense<{{.*}}> : tensor<6x2xf32>) : tensor<3x2xf32> {nncc.shard = array<i64: 0, 2>}
// CHECK-LABEL: func.func @forward
// CHECK: %[[RANK:.*]] = nn.cast %{{.*}} : (tensor<i64>) -> tensor<i32>
// CHECK: %[[OFFSET:.*]] = nn.mul %[[RANK]], %{{.*}} : (tensor<i32>, tensor<i32>) -> tensor<i32>
// CHECK: nn.gather %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<3x2xf32>, tensor<5xi32>) -> tensor<5x2xf32>
// CHECK: dist.all_reduce
func.func @forward(%ids: tensor<5xi32>) -> tensor<5x2xf32> {
  %t = nn.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0], [9.0, 10.0], [11.0, 12.0]]> : tensor<6x2xf32> loc("tok")
  %e = nn.gather %t, %ids {axis = 0 : i64} : (tensor<6x2xf32>, tensor<5xi32>) -> tensor<5x2xf32>
  return %e : tensor<5x2xf32>
}

// -----

// A table tied to the LM head (the same weight also read by a matmul) stays
// whole: every rank needs all of its rows for the logits. The MLP pair
// between them is still split. A table whose rows (7) do not divide by the
// ranks stays whole too.
// CHECK-DAG: ml_program.global private mutable @tied(dense<{{.*}}> : tensor<8x4xf32>) : tensor<8x4xf32>{{$}}
// CHECK-DAG: ml_program.global private mutable @odd(dense<{{.*}}> : tensor<7x4xf32>) : tensor<7x4xf32>{{$}}
// CHECK-DAG: ml_program.global private mutable @w1({{.*}} {nncc.shard = array<i64: 1, 2>}
// CHECK-DAG: ml_program.global private mutable @w2({{.*}} {nncc.shard = array<i64: 0, 2>}
// CHECK-NOT: nncc.layout
// CHECK-LABEL: func.func @forward
// CHECK: nn.gather %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<8x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
// CHECK: nn.gather %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<7x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
// CHECK: dist.all_reduce
// CHECK-NOT: dist.all_reduce
// CHECK: return
module {
  ml_program.global private mutable @tied(dense<1.0> : tensor<8x4xf32>) : tensor<8x4xf32>
  ml_program.global private mutable @odd(dense<1.0> : tensor<7x4xf32>) : tensor<7x4xf32>
  ml_program.global private mutable @w1(dense<1.0> : tensor<4x8xf32>) : tensor<4x8xf32>
  ml_program.global private mutable @w2(dense<1.0> : tensor<8x4xf32>) : tensor<8x4xf32>
  func.func @forward(%ids: tensor<3xi64>, %pos: tensor<3xi64>) -> tensor<3x8xf32> {
    %t = ml_program.global_load @tied : tensor<8x4xf32>
    %o = ml_program.global_load @odd : tensor<7x4xf32>
    %w1 = ml_program.global_load @w1 : tensor<4x8xf32>
    %w2 = ml_program.global_load @w2 : tensor<8x4xf32>
    %e = nn.gather %t, %ids {axis = 0 : i64} : (tensor<8x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
    %p = nn.gather %o, %pos {axis = 0 : i64} : (tensor<7x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
    %x = nn.add %e, %p : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %h = nn.matmul %x, %w1 : (tensor<3x4xf32>, tensor<4x8xf32>) -> tensor<3x8xf32>
    %a = nn.relu %h : tensor<3x8xf32>
    %m = nn.matmul %a, %w2 : (tensor<3x8xf32>, tensor<8x4xf32>) -> tensor<3x4xf32>
    %logits = nn.gemm %m, %t {alpha = 1.0 : f64, beta = 1.0 : f64, trans_a = false, trans_b = true} : (tensor<3x4xf32>, tensor<8x4xf32>) -> tensor<3x8xf32>
    return %logits : tensor<3x8xf32>
  }
}

// -----

// A table whose rows do not divide by the ranks, alone: nothing splits.
// expected-error@below {{no layer of 'forward' splits over 2 ranks}}
func.func @forward(%ids: tensor<3xi64>) -> tensor<3x4xf32> {
  %t = nn.constant dense<1.0> : tensor<5x4xf32> loc("odd")
  %e = nn.gather %t, %ids {axis = 0 : i64} : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return %e : tensor<3x4xf32>
}
