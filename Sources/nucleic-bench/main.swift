print("nucleic-bench")
