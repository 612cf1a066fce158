"""Train a controller: ``python train.py [overrides]`` (configs/train.yaml; workflows/train.py)."""

from workflows.train import main

if __name__ == "__main__":
    main()
