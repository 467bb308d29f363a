print("framectl")
