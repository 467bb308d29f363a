print("framerated")
