"""Reads the TensorProto files remat writes (--dump-params), standard library
only: CI's python has no onnx. Handles what runtime/io/TensorProtoIO.cpp
writes: dims, data_type and raw_data (little-endian)."""
import array
import sys

# onnx.TensorProto.DataType -> array typecode.
_TYPECODES = {1: "f", 6: "i", 7: "q", 11: "d"}


def _varint(buf, pos):
    value, shift = 0, 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def read(path):
    """Returns (dims, data_type, values as a list)."""
    with open(path, "rb") as f:
        buf = f.read()
    dims, data_type, raw = [], 0, b""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
            if field == 1:
                dims.append(value)
            elif field == 2:
                data_type = value
        elif wire == 2:
            length, pos = _varint(buf, pos)
            chunk = buf[pos:pos + length]
            pos += length
            if field == 9:
                raw = chunk
            elif field == 1:  # packed dims
                p = 0
                while p < len(chunk):
                    d, p = _varint(chunk, p)
                    dims.append(d)
        elif wire == 5:
            pos += 4
        elif wire == 1:
            pos += 8
        else:
            raise ValueError("%s: unexpected protobuf wire type %d" % (path, wire))
    code = _TYPECODES.get(data_type)
    if code is None:
        raise ValueError("%s: data type %d is not read here" % (path, data_type))
    values = array.array(code)
    values.frombytes(raw)
    if sys.byteorder != "little":
        values.byteswap()
    return dims, data_type, values.tolist()
