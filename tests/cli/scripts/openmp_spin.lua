-- Prints the OpenMP spin count kiln run gives oneDNN's threads.
print("GOMP_SPINCOUNT=" .. tostring(os.getenv("GOMP_SPINCOUNT")))
