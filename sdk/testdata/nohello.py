"""A worker that starts and never says hello."""
import time

while True:
    time.sleep(3600)
