"""Train a controller: ``python train.py [overrides]`` (configs/train.yaml)."""

from agents.train import main

if __name__ == "__main__":
    main()
