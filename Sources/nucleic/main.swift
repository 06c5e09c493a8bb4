print("nucleic")
