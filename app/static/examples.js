// Example specs (one click away) and the starting spec of each dialect.

const dmlTensor = (DataType, Sizes) => ({ DataType, Sizes });

export const EXAMPLES = [
  {
    id: 'relu6-f16',
    label: 'Relu6, float16',
    spec: { dialect: 'onnx', opset: 13, elem_type: 'FLOAT16', shape: [1, 3, 224, 224], min: 0, max: 6 },
  },
  {
    id: 'int8-fractional',
    label: 'int8, fractional bounds',
    mode: 'literal',
    spec: { dialect: 'openvino', version: 'opset1', element_type: 'i8', min: 0.5, max: 100.7 },
  },
  {
    id: 'min-gt-max',
    label: 'min > max',
    mode: 'literal',
    spec: { dialect: 'onnx', opset: 13, elem_type: 'INT8', min: 5, max: 2 },
  },
  {
    id: 'int64-big',
    label: 'int64 bound beyond 2^53',
    spec: { dialect: 'onnx', opset: 13, elem_type: 'INT64', min: 0, max: '9007199254740993' },
  },
  {
    id: 'dml-scalebias',
    label: 'DirectML with ScaleBias',
    spec: {
      dialect: 'directml', feature_level: '6_4', operator: 'ELEMENT_WISE_CLIP',
      desc: {
        InputTensor: dmlTensor('FLOAT16', [1, 3, 8, 8]), OutputTensor: dmlTensor('FLOAT16', [1, 3, 8, 8]),
        ScaleBias: { Scale: 0.5, Bias: 1 }, Min: 0, Max: 6,
      },
    },
  },
  {
    id: 'clip6-defaults',
    label: 'ONNX Clip-6 with defaults',
    spec: { dialect: 'onnx', opset: 6, elem_type: 'FLOAT16' },
  },
];

export const TEMPLATES = {
  onnx: { dialect: 'onnx', opset: 13, elem_type: 'FLOAT', min: 0, max: 6 },
  openvino: { dialect: 'openvino', version: 'opset1', element_type: 'f32', min: 0, max: 6 },
  directml: {
    dialect: 'directml', feature_level: '6_4', operator: 'ELEMENT_WISE_CLIP',
    desc: { InputTensor: dmlTensor('FLOAT32', [1, 1, 1, 4]), OutputTensor: dmlTensor('FLOAT32', [1, 1, 1, 4]), Min: 0, Max: 6 },
  },
};

/** A deep copy (specs are plain JSON). */
export const copy = (spec) => JSON.parse(JSON.stringify(spec));
