# 20 Adam steps of remat-run against PyTorch's own loss curves of the same
# models (issue 13, item 7). The curves, and how they were made, are in
# tests/models/pytorch/mixed_precision/ (README.md there);
# compare_loss_curve.py runs remat-run, prints step, reference, remat and
# relative difference, and fails when any step is further than --rel-tol.
#
# fp32 tolerance 1e-4. Measured (remat-run, Release, this repository's CPU
# kernels, against PyTorch 1.13 fp32): worst relative difference 3.7e-7
# (gpt2_tiny), 1.9e-7 (llama_tiny), 8.2e-6 (bert_tiny, whose loss falls to
# 0.043, where remat-run's six printed decimals alone allow 1.2e-5). 1e-4 is
# twelve times the worst and a hundred times tighter than issue 13's 1%.
#
# How discriminating 1% is: PyTorch's own bf16 autocast curve stays within
# 2.6e-4 (gpt2_tiny), 1.1e-4 (llama_tiny) and 4.2e-3 (bert_tiny) of its fp32
# curve at every step, so an fp32 run passes the 1% bf16 comparison too. The
# bf16 entries therefore also require remat's curve to be at least 3e-5 away
# from the fp32 reference at some step (--must-differ-from fp32): above every
# fp32-vs-fp32 difference measured, and below each model's bf16-vs-fp32
# maximum.

set(curves ${REMAT_SOURCE_DIR}/tests/models/pytorch/mixed_precision)

foreach(model gpt2_tiny llama_tiny bert_tiny)
  add_test(NAME training/${model}/pytorch-curve/fp32
           COMMAND ${Python3_EXECUTABLE} ${curves}/compare_loss_curve.py
                   --remat-run $<TARGET_FILE:remat-run>
                   --reference ${curves}/${model}.json --mode fp32
                   --rel-tol 1e-4)

  # --precision bf16: within issue 13's 1% of PyTorch's
  # torch.autocast("cpu", bfloat16) curve at every step, and not an fp32 run.
  # Measured (worst step of 20): gpt2_tiny 4.4e-4, llama_tiny 2.0e-4,
  # bert_tiny 6.8e-3 (whose loss falls to 0.043).
  add_test(NAME training/${model}/pytorch-curve/bf16
           COMMAND ${Python3_EXECUTABLE} ${curves}/compare_loss_curve.py
                   --remat-run $<TARGET_FILE:remat-run>
                   --reference ${curves}/${model}.json --mode bf16
                   --rel-tol 0.01 --must-differ-from fp32 --min-rel-diff 3e-5
                   -- --precision bf16)

  # --precision fp16 (dynamic loss scaling from 2^16, its default) against
  # PyTorch's fp16 autocast with GradScaler (torch 2.15; no step overflows
  # at 2^16). Its curve is within 4.3e-5 (gpt2_tiny), 3.3e-5 (llama_tiny),
  # 8.2e-4 (bert_tiny) of fp32, too close to tell an fp32 run apart by the
  # loss alone. Measured: 1.2e-4, 2.6e-5, 1.2e-3.
  add_test(NAME training/${model}/pytorch-curve/fp16
           COMMAND ${Python3_EXECUTABLE} ${curves}/compare_loss_curve.py
                   --remat-run $<TARGET_FILE:remat-run>
                   --reference ${curves}/${model}.json --mode fp16
                   --rel-tol 0.01 -- --precision fp16)

  # The fp16_overflow curve: GradScaler from 2^24, so the first steps
  # overflow and are skipped (gpt2_tiny 1-5, 8, 9 and 11; llama_tiny 1-5;
  # bert_tiny 1-8) and training recovers. remat-run from the same scale
  # skips the same steps, or its curve would be far off (a skipped step
  # repeats the loss; see detects-mismatch below). Measured: 1.3e-4,
  # 2.2e-5, 9.8e-4.
  add_test(NAME training/${model}/pytorch-curve/fp16-overflow
           COMMAND ${Python3_EXECUTABLE} ${curves}/compare_loss_curve.py
                   --remat-run $<TARGET_FILE:remat-run>
                   --reference ${curves}/${model}.json --mode fp16_overflow
                   --rel-tol 0.01 -- --precision fp16 --init-loss-scale 16777216)
endforeach()

# The comparison can fail. A skipped step repeats the loss, so remat's fp32
# curve is far from the fp16_overflow curve (exit 1) ...
add_test(NAME training/pytorch-curve/detects-mismatch
         COMMAND sh -c "\"$0\" \"$@\" > /dev/null; test $? -eq 1"
                 ${Python3_EXECUTABLE} ${curves}/compare_loss_curve.py
                 --remat-run $<TARGET_FILE:remat-run>
                 --reference ${curves}/llama_tiny.json --mode fp16_overflow
                 --rel-tol 0.01)
# ... PyTorch's bf16 curve is not its fp32 curve within 1e-5 (exit 1), but
# is within 1% ...
add_test(NAME training/pytorch-curve/bf16-vs-fp32-tight
         COMMAND sh -c "\"$0\" \"$@\" > /dev/null; test $? -eq 1"
                 ${Python3_EXECUTABLE} ${curves}/compare_loss_curve.py
                 --reference ${curves}/gpt2_tiny.json --mode bf16 --versus fp32
                 --rel-tol 1e-5)
add_test(NAME training/pytorch-curve/bf16-vs-fp32-one-percent
         COMMAND ${Python3_EXECUTABLE} ${curves}/compare_loss_curve.py
                 --reference ${curves}/gpt2_tiny.json --mode bf16 --versus fp32
                 --rel-tol 0.01)
# ... so the bf16 guard is what catches an fp32 run (exit 1) ...
add_test(NAME training/pytorch-curve/guard-catches-fp32-run
         COMMAND sh -c "\"$0\" \"$@\" > /dev/null; test $? -eq 1"
                 ${Python3_EXECUTABLE} ${curves}/compare_loss_curve.py
                 --remat-run $<TARGET_FILE:remat-run>
                 --reference ${curves}/llama_tiny.json --mode bf16
                 --rel-tol 0.01 --must-differ-from fp32 --min-rel-diff 3e-5)
# ... and a model directory whose files are not the ones the reference was
# made from is refused before anything runs (exit 2).
add_test(NAME training/pytorch-curve/stale-reference
         COMMAND sh -c "\"$0\" \"$@\" 2> /dev/null; test $? -eq 2"
                 ${Python3_EXECUTABLE} ${curves}/compare_loss_curve.py
                 --remat-run $<TARGET_FILE:remat-run>
                 --reference ${curves}/llama_tiny.json --mode fp32
                 --model-dir ${REMAT_SOURCE_DIR}/tests/models/pytorch/bert_tiny
                 --rel-tol 1e-4)
