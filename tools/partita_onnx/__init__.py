"""The ONNX importer behind tools/partita_import.py.

An ONNX file becomes a C++ header of Partita node types and a safetensors file of its weights.
The stages, one module each, in the order they run:

    loader    read and validate the file, fix input shapes, infer every shape
                (validate: every tensor and attribute checked before native code reads them;
                external_data: read only from inside the model's folder; inference: ONNX
                shape inference in a child process; limits: the memory cap and time limit;
                qlinear: quantized operator forms rewritten in QDQ form)
    graph     a small mutable graph of the ONNX nodes, constants held as numpy arrays
    fold      constants and shape arithmetic evaluated with numpy; Identity and Dropout dropped
    fuse      exporter decompositions recognised (layer norm, erf GELU, MatMul + Add, ...)
    ops       the mapping table: one ONNX op to Partita op types, with its attribute limits
                (quant: the checks of scales and zero points, shared with fold and qlinear)
    terms     the Partita expressions the table builds
    emit      the C++ header: named node types, shape checks, the model
    weights   the safetensors file and the optional embedded copy of it
    cli       the command line, which reports every problem at once
"""
