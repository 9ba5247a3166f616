# (f) Mixed precision (--precision bf16|fp16, remat-mixed-precision and
# loss scaling), included from tests/training/CMakeLists.txt.
#
# 1. Planned == unplanned, bit for bit, in each precision: as (d), two or
# four Adam steps unplanned and planned under a budget between each model's
# floor and its baseline, with --check-arena and --check-exact on the first
# step's gradients and the final parameters. The fp16 runs start at a loss
# scale that overflows in some steps (2^20 on gpt2_tiny, 2^19 on llama_tiny)
# with a growth interval of 1, so that skipped steps, the backoff and the
# growth all run planned and unplanned.
#
# Budgets. `remat-run MODEL --train --precision P --budget 1TB --strategy
# none --dump-grads DIR` prints the gradient-returning step's baseline peak,
# and `--budget 1B` the floor the strategies reach:
#   gpt2_tiny  bf16 15767808 / 14.92 MB   fp16 15800320 / 14.96 MB
#   llama_tiny bf16  2608128 /  2.29 MB   fp16  2608896 /  2.34 MB
#   cnn        bf16   456960 / 418.56 KB  fp16   457984 / 420.10 KB
# (fp16's floor is higher: every gradient lives until the overflow check
# of all of them, as with torch.amp.GradScaler).
#
# name|directory|precision|budget|strategies|loss-scale flags
set(mixed_precision_arena_runs
    "gpt2_tiny|${REMAT_SOURCE_DIR}/tests/fixtures/gpt2_tiny|bf16|15300000|sqrt auto|"
    "gpt2_tiny|${REMAT_SOURCE_DIR}/tests/fixtures/gpt2_tiny|fp16|15350000|sqrt auto|--init-loss-scale 1048576 --growth-interval 1"
    "llama_tiny|${REMAT_SOURCE_DIR}/tests/models/pytorch/llama_tiny|bf16|2450000|sqrt auto|"
    "llama_tiny|${REMAT_SOURCE_DIR}/tests/models/pytorch/llama_tiny|fp16|2480000|sqrt auto|--init-loss-scale 524288 --growth-interval 1"
    "cnn|${REMAT_SOURCE_DIR}/tests/models/pytorch/cnn|bf16|440000|sqrt auto|")

foreach(entry IN LISTS mixed_precision_arena_runs)
  string(REPLACE "|" ";" fields "${entry}")
  list(GET fields 0 model)
  list(GET fields 1 dir)
  list(GET fields 2 precision)
  list(GET fields 3 budget)
  list(GET fields 4 strategies)
  list(GET fields 5 scaling)
  separate_arguments(strategies)
  separate_arguments(scaling)
  set(steps 2)
  if(scaling)
    set(steps 4)
  endif()
  set(onnx ${dir}/loss/model.onnx)
  set(data ${dir}/loss/test_data_set_0)
  set(base ${out_root}/${model}/${precision}-unplanned)
  set(common --train --steps ${steps} --optimizer adam --inputs ${data}
             --precision ${precision} ${scaling})
  add_test(NAME training/${model}/${precision}/arena/unplanned
           COMMAND $<TARGET_FILE:remat-run> ${onnx} ${common} --strategy none
                   --dump-params ${base}/params --dump-grads ${base}/grads)
  set_tests_properties(training/${model}/${precision}/arena/unplanned
                       PROPERTIES FIXTURES_SETUP arena-${model}-${precision})
  foreach(strategy IN LISTS strategies)
    set(name training/${model}/${precision}/arena/${strategy}-${budget})
    add_test(NAME ${name}
             COMMAND sh -c "out=$(\"$0\" \"$@\"); rc=$?; printf '%s\\n' \"$out\"; test $rc -eq 0 && printf '%s\\n' \"$out\" | grep -q '^arena high-water [0-9]* of planned [0-9]*$'"
                     $<TARGET_FILE:remat-run> ${onnx} ${common}
                     --budget ${budget} --strategy ${strategy} --target cpu
                     --check-arena --check-params ${base}/params
                     --check-grads ${base}/grads --check-exact)
    set_tests_properties(${name} PROPERTIES
                         FIXTURES_REQUIRED arena-${model}-${precision})
  endforeach()
endforeach()

# 2. fp16 dynamic loss scaling recovers from overflow, and the steps it
# skips change nothing: gpt2_tiny from a scale of 2^24 overflows in steps
# 1-5 (the scale halves each time, GradScaler's backoff, down to 2^19),
# and then trains as if those steps had never happened: step 6 has
# PyTorch's initial loss and step 7 PyTorch's loss after one Adam step
# (the fixture's manifest: 6.284749984741211 and 5.892139434814453), which
# it only reaches if the skipped steps left the parameters, the Adam
# moments and the step count (Adam's bias correction) untouched. The
# tolerance is fp16-sized; measured: 2e-6 relative at both steps.
set(gpt2 ${REMAT_SOURCE_DIR}/tests/fixtures/gpt2_tiny)
add_test(NAME training/gpt2_tiny/fp16/overflow-recovers
         COMMAND ${Python3_EXECUTABLE}
                 ${CMAKE_CURRENT_SOURCE_DIR}/check_steps.py
                 --skipped 1-5 --scale 1:8388608 --scale 5:524288
                 --scale 7:524288 --loss 6:6.284749984741211:1e-3
                 --loss 7:5.892139434814453:1e-3
                 -- $<TARGET_FILE:remat-run> ${gpt2}/loss/model.onnx --train
                 --steps 7 --optimizer adam --lr 1e-3
                 --inputs ${gpt2}/loss/test_data_set_0 --precision fp16
                 --init-loss-scale 16777216)

# A fixed scale (--loss-scale N) too large for fp16 skips every step and
# never changes.
add_test(NAME training/gpt2_tiny/fp16/fixed-scale-overflow-skips
         COMMAND ${Python3_EXECUTABLE}
                 ${CMAKE_CURRENT_SOURCE_DIR}/check_steps.py
                 --skipped 1-3 --loss 3:6.284749984741211:1e-3
                 -- $<TARGET_FILE:remat-run> ${gpt2}/loss/model.onnx --train
                 --steps 3 --optimizer adam --lr 1e-3
                 --inputs ${gpt2}/loss/test_data_set_0 --precision fp16
                 --loss-scale 1e30)

# bf16 needs no loss scaling: one Adam step lands on PyTorch's fp32 loss
# after the step within bf16's precision (the loss curves over 20 steps
# against PyTorch's own bf16 autocast training are item 7's tests).
add_test(NAME training/gpt2_tiny/bf16/adam-step
         COMMAND ${Python3_EXECUTABLE}
                 ${CMAKE_CURRENT_SOURCE_DIR}/check_steps.py
                 --loss 1:6.284749984741211:1e-3
                 --loss 2:5.892139434814453:1e-3
                 -- $<TARGET_FILE:remat-run> ${gpt2}/loss/model.onnx --train
                 --steps 2 --optimizer adam --lr 1e-3
                 --inputs ${gpt2}/loss/test_data_set_0 --precision bf16)
