// RUN: nncc-opt %s -nncc-add-loss | FileCheck %s
// RUN: nncc-opt %s -nncc-add-loss="loss=mse label-name=target" | FileCheck %s --check-prefix=MSE
// RUN: not nncc-opt %s -nncc-add-loss="output=nope" 2>&1 | FileCheck %s --check-prefix=NOPE

// Cross-entropy over a Softmax output: eval_step copies forward, takes the
// softmax's input through one log-softmax (not log of the probabilities),
// picks each row's label with a one-hot of the class ids, and returns the
// negative mean with a check flag for labels outside [0, 3).
// CHECK-LABEL: func.func @eval_step
// CHECK-SAME: (%{{.*}}: tensor<2x4xf32> {nn.name = "x"}, %[[L:[^:]*]]: tensor<2xi64> {nn.name = "labels"})
// CHECK-SAME: -> (tensor<f32> {nn.name = "loss"}, tensor<i32> {nncc.check = "input 'labels': a label is outside the classes [0, 3)"})
// CHECK: %[[LOGITS:.*]] = nn.matmul
// CHECK: %[[LOGP:.*]] = nn.log_softmax %[[LOGITS]] {axis = 1 : i64}
// CHECK: %[[COL:.*]] = nn.reshape %[[L]]
// CHECK: %[[IDS:.*]] = nn.constant dense<{{\[\[}}0, 1, 2]]> : tensor<1x3xi64>
// CHECK: nn.equal %[[COL]], %[[IDS]]
// CHECK: nn.mul %{{.*}}, %[[LOGP]]
// CHECK: nn.reduce_mean
// CHECK: nn.neg
// CHECK: nn.reduce_max
// MSE-LABEL: func.func @eval_step
// MSE-SAME: (%{{.*}}: tensor<2x4xf32> {nn.name = "x"}, %[[T:[^:]*]]: tensor<2x3xf32> {nn.name = "target"}) -> (tensor<f32> {nn.name = "loss"})
// MSE: %[[P:.*]] = nn.softmax
// MSE: %[[D:.*]] = nn.sub %[[P]], %[[T]]
// MSE: nn.mul %[[D]], %[[D]]
// MSE: nn.reduce_mean {{.*}}axes = array<i64: 0, 1>
// NOPE: error: --loss-output: the model has no output 'nope'
func.func @forward(%x: tensor<2x4xf32> {nn.name = "x"}) -> (tensor<2x3xf32> {nn.name = "probs"}) {
  %w = nn.constant dense<0.5> : tensor<4x3xf32>
  %logits = nn.matmul %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %p = nn.softmax %logits {axis = 1 : i64} : tensor<2x3xf32>
  return %p : tensor<2x3xf32>
}
