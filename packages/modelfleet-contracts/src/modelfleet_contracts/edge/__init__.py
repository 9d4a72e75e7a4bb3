"""The protobuf side of the contracts: what only a function's gRPC edge (fn.py, main.py)
imports. Converting Structs, reading observed resources and required InferenceClusters
straight from protobuf, writing an `Outcome` into the response, the time a request is decided
at (now.py), the safe runner and the console script. Nothing outside this package imports
crossplane, grpc or protobuf (tests/test_layering.py proves it), so every core stays plain
data in, plain data out."""
