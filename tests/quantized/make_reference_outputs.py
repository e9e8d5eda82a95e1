"""Writes TFLite reference-interpreter outputs for int8 corpus models.

Usage: python3 make_reference_outputs.py OUT_DIR
Then: GRAFT_QUANT_REFERENCE_DIR=OUT_DIR quantized_interpreter_reference_test

For each model, OUT_DIR/mK/ gets `path` (the model), in<i>.npy (seeded
random inputs), ref_out<j>.npy (BUILTIN_REF resolver: TFLite's reference
kernels) and opt_out<j>.npy (the default optimized kernels).
"""
import numpy as np, sys, os
from ai_edge_litert.interpreter import Interpreter, OpResolverType
root='/work/shared/third_party_models/'
models=['LiteRT/tflite/testdata/add_quantized_int8.bin',
 'LiteRT/litert/test/testdata/single_add_default_a8w8_recipe_quantized.tflite',
 'LiteRT/litert/test/testdata/single_mul_default_a8w8_recipe_quantized.tflite',
 'LiteRT/tflite/converter/quantization/lite/testdata/fc_qat.bin',
 'LiteRT/tflite/python/testdata/pc_conv.bin',
 'tflite-micro/tensorflow/lite/micro/examples/hello_world/models/hello_world_int8.tflite',
 'tflite-micro/tensorflow/lite/micro/examples/micro_speech/models/micro_speech_quantized.tflite',
 'tflite-micro/tensorflow/lite/micro/python/tflite_size/tests/simple_add_model.tflite']
rng=np.random.default_rng(1234)
for k,m in enumerate(models):
  d=os.path.join(sys.argv[1], f'm{k}'); os.makedirs(d,exist_ok=True)
  open(d+'/path','w').write(root+m)
  ins=None
  for name,rt in [('ref',OpResolverType.BUILTIN_REF),('opt',OpResolverType.BUILTIN)]:
    try:
      it=Interpreter(model_path=root+m, experimental_op_resolver_type=rt); it.allocate_tensors()
    except Exception as e:
      print(m, 'load fail', e); break
    if ins is None:
      ins=[]
      for i,det in enumerate(it.get_input_details()):
        dt=det['dtype']; sh=det['shape']
        if np.issubdtype(dt,np.integer):
          info=np.iinfo(dt); x=rng.integers(info.min,info.max+1,size=sh).astype(dt)
        else: x=rng.uniform(-1,1,size=sh).astype(dt)
        ins.append(x); np.save(f'{d}/in{i}.npy',x)
    for i,det in enumerate(it.get_input_details()): it.set_tensor(det['index'],ins[i])
    it.invoke()
    for j,det in enumerate(it.get_output_details()):
      np.save(f'{d}/{name}_out{j}.npy', it.get_tensor(det['index']))
  print(k,m,[ (x.dtype,x.shape) for x in (ins or [])])
