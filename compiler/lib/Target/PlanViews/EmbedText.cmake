# Writes the text file INPUT as a C++ raw string literal to OUTPUT, so that a
# template kept as a real .html file in the tree is compiled into the binary.
file(READ "${INPUT}" content)
file(WRITE "${OUTPUT}" "R\"remat_embed(${content})remat_embed\"\n")
